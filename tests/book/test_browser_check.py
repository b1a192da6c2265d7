"""The browser check fails where a reader would see a broken page, and charges each problem to its own page: a
tiny site with one broken page between two good ones (the check opens every page in one tab)."""
from __future__ import annotations

import os

import pytest

from rlvr_dynamics.book.browser_check import check_book, find_chromium

GOOD = "<!doctype html><html><body><article><p>A plain page with nothing wrong.</p></article></body></html>"
BROKEN = ("<!doctype html><html><body><article><p>A page with problems.</p>"
          '<figure><img src="missing.png"><figcaption>A figure whose image does not exist.</figcaption></figure>'
          '<figure><img src="http://example.com/far.png"><figcaption>A figure from another host.</figcaption></figure>'
          '<div style="width: 3000px">wider than any window</div>'
          "</article></body></html>")


@pytest.mark.browser
def test_problems_are_found_and_charged_to_their_own_page(tmp_path):
    if find_chromium() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("Chromium is required in CI (.ci/run installs Debian's chromium-headless-shell)")
        pytest.skip("no Chromium on this machine (apt-get install chromium-headless-shell)")
    (tmp_path / "index.html").write_text(GOOD)
    for name, html in (("a.html", GOOD), ("b.html", BROKEN), ("c.html", GOOD)):
        (tmp_path / name).write_text(html)
    reports = {r.page: r.problems for r in check_book(tmp_path, pages=["a.html", "b.html", "c.html"])}
    assert list(reports) == ["a.html", "a.html @ 390 px", "b.html", "b.html @ 390 px", "c.html", "c.html @ 390 px"]
    assert reports["a.html"] == reports["c.html"] == reports["a.html @ 390 px"] == reports["c.html @ 390 px"] == []
    broken = "\n".join(reports["b.html"])
    assert "HTTP 404" in broken and "missing.png" in broken
    assert "external request blocked: http://example.com/far.png" in broken
    assert "image not loaded: missing.png" in broken
    assert "page scrolls horizontally" in broken
    assert any("page scrolls horizontally" in p for p in reports["b.html @ 390 px"])
