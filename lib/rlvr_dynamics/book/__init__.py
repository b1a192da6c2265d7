"""The book's spine: notebook registry and papermill runner, claims ledger, Jupyter Book build, browser check.

- :mod:`.registry`: ``notebooks/registry/*.yml`` and the papermill runner behind ``rlvr-dynamics run``.
- :mod:`.claims`: the claims ledger every notebook ends with (``claims.record``), checked against ``book/claims.yml``.
- :mod:`.build`: the offline Jupyter Book 1 build (TOC, scorecard, local MathJax).
- :mod:`.browser_check`: headless Chromium over the built book.

Submodules are imported on use (papermill and the book toolchain are heavy): ``from rlvr_dynamics.book import
claims``.
"""
