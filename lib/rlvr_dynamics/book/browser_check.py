"""Open the built book in headless Chromium with no network and check what a reader sees.

For every HTML page: no request leaves 127.0.0.1 (such requests are blocked and reported), no local request fails
or returns ≥ 400, every image loads (``complete`` and ``naturalWidth > 0``), and every math element is typeset by
the locally served MathJax (one ``mjx-container`` per ``.math`` element, no ``mjx-merror``). Optionally saves a
screenshot of one page (the README's picture of the book).

Uses Debian's ``chromium`` driven by ``playwright`` (Python) with ``executable_path``: no browser download.
"""
from __future__ import annotations

import functools
import http.server
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


@dataclass
class PageReport:
    """What one page loaded and what went wrong."""

    page: str
    math_elements: int = 0
    math_rendered: int = 0
    images: int = 0
    problems: list[str] = field(default_factory=list)


def find_chromium() -> str | None:
    """Path of a Chromium binary (Debian's ``chromium`` first), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # noqa: D401 - silence the access log
        pass


def check_book(html_dir: str | Path, pages: list[str] | None = None, screenshot: str | Path | None = None,
               screenshot_page: str = "intro.html", timeout_ms: int = 30000) -> list[PageReport]:
    """Check ``pages`` (default: every ``*.html`` except search, genindex and the index redirect) of the built book in ``html_dir``."""
    from playwright.sync_api import sync_playwright

    html_dir = Path(html_dir)
    if not (html_dir / "index.html").exists():
        raise ValueError(f"html_dir {html_dir} holds no built book (index.html missing)")
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium found: apt-get install chromium")
    if pages is None:
        pages = sorted(str(p.relative_to(html_dir)) for p in html_dir.rglob("*.html")
                       if str(p.relative_to(html_dir)) not in ("search.html", "genindex.html", "index.html") and "_static" not in p.parts)
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    reports: list[PageReport] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            for rel in pages:
                report = PageReport(rel)
                page = context.new_page()

                def route(r, report=report):
                    if r.request.url.startswith(base) or r.request.url.startswith("data:"):
                        r.continue_()
                    else:
                        report.problems.append(f"external request blocked: {r.request.url}")
                        r.abort()

                page.route("**/*", route)
                page.on("requestfailed", lambda req, report=report: report.problems.append(
                    f"request failed: {req.url} ({req.failure})") if req.url.startswith(base) else None)
                page.on("response", lambda resp, report=report: report.problems.append(
                    f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
                page.goto(base + rel, wait_until="load", timeout=timeout_ms)
                page.wait_for_load_state("networkidle", timeout=timeout_ms)
                has_mathjax = page.evaluate("() => !!document.querySelector('script[src*=\"mathjax\"]')")
                if has_mathjax:
                    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                                           timeout=timeout_ms)
                    page.evaluate("() => MathJax.startup.promise")
                stats = page.evaluate("""() => ({
                    math: document.querySelectorAll('.math').length,
                    rendered: document.querySelectorAll('.math mjx-container').length,
                    errors: document.querySelectorAll('mjx-merror').length,
                    images: document.images.length,
                    broken: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)
                                 .map(i => i.getAttribute('src')),
                })""")
                report.math_elements, report.math_rendered = stats["math"], stats["rendered"]
                report.images = stats["images"]
                if stats["math"] and not has_mathjax:
                    report.problems.append(f"{stats['math']} math elements but no MathJax script")
                if stats["rendered"] < stats["math"]:
                    report.problems.append(f"only {stats['rendered']} of {stats['math']} math elements typeset")
                if stats["errors"]:
                    report.problems.append(f"{stats['errors']} MathJax errors")
                report.problems += [f"image not loaded: {src}" for src in stats["broken"]]
                if screenshot is not None and rel == screenshot_page:
                    page.screenshot(path=str(screenshot), full_page=False)
                page.close()
                reports.append(report)
            browser.close()
    finally:
        server.shutdown()
    return reports
