"""The book's spine: notebook registry and papermill runner, claims ledger, Jupyter Book build, browser check.

- :mod:`.registry`: ``notebooks/registry/*.yml`` and the papermill runner behind ``rlvr-dynamics run``.
- :mod:`.claims`: the rows every notebook ends with (``claims.record``); it re-exports the criteria of
  ``book/claims.yml`` (``claims.criterion``) and the one-verdict-per-claim rule (``claims.claim_verdicts``) from
  :mod:`rlvr_dynamics.verdicts`, where the claim checks on GRPO runs also live.
- :mod:`.build`: the offline Jupyter Book 1 build (``build_book``), over
  :mod:`.pages` (executed notebook → reader-first page), :mod:`.site_pages` (TOC, scorecard, claims appendix,
  landing, downloads), :mod:`.markup` (badges, links, criterion text) and :mod:`.explorer` (the explorer's data).
- :mod:`.browser_check`: headless Chromium over the built book.
- :mod:`.field_reference`: the tables of the live doctor's and the TRL callback's logged fields (units, claims).

Submodules are imported on use (papermill and the book toolchain are heavy): ``from rlvr_dynamics.book import
claims``.
"""
