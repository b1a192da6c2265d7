"""Open the built book in headless Chromium with no network and check what a reader sees.

For every HTML page, in a window :data:`VIEWPORT` wide: no request leaves 127.0.0.1 (such requests are blocked and
reported), no local request fails or returns ≥ 400, every image loads (``complete`` and ``naturalWidth > 0``),
every math element is typeset by the locally served MathJax (one ``mjx-container`` per ``.math`` element, no
``mjx-merror``), the page does not scroll horizontally and no table is wider than its box, no text holds a
``<matplotlib …>`` repr, no verdict badge overflows its table cell, no word breaks mid-word across lines, the reader text (not code or
output) holds no tracker language (``issue 9``) and no notebook parameter names (``c3_momentum``), and every
figure has a numbered caption with text (every output image sits in a figure). Every page is opened again at
:data:`NARROW_VIEWPORT` (390 px), where it must not scroll horizontally; :data:`NARROW_PAGES` must also hold every
other layout rule there.
On a notebook page (``executed/``) a verdict badge sits above the first figure, and the first figure starts at most
:data:`MAX_FIRST_FIGURE_PX` down the page (the page leads with its key figure). On the explorer page, moving each
slider changes the plot. Optionally saves a screenshot of one page (the README's picture of the book).

Uses Debian's ``chromium-headless-shell`` (or ``chromium``) driven by ``playwright`` (Python) with
``executable_path``: no browser download.

:func:`reader_text_problems` needs no browser (the book build runs it on every page it writes): the reader text of
every page (not code, math or printed output) holds no reference to the project's private notes ("spec", "§"), no
words about how the work was done ("the audit", "the issue asked for", "session", "tracker"), no code name outside a
code span (``is_collapsed``) and no raw Python value (``nan``, ``[]``, ``: True``, a numpy array).
"""
from __future__ import annotations

import fnmatch
import functools
import http.server
import shutil
import socket
import threading
import re
from html.parser import HTMLParser
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


VIEWPORT = {"width": 1280, "height": 900}
"""Window size of the check: the width at which nothing may scroll horizontally."""
MAX_FIRST_FIGURE_PX = 1200
"""A notebook page leads with its key figure: the first figure's top is at most this far down the page, in a
:data:`VIEWPORT`-wide window."""
NARROW_VIEWPORT = {"width": 390, "height": 900}
"""A phone-width window: every page is checked at this width too (the same loaded page, its window narrowed) for
horizontal page scroll (wide tables, code and display math scroll in their own box), and :data:`NARROW_PAGES` for
every layout rule."""
NARROW_PAGES = ("scorecard.html", "intro.html")
"""Pages whose layout must also hold at :data:`NARROW_VIEWPORT` (tables of badges)."""


READER_TEXT_RULES: tuple[tuple[str, "re.Pattern[str]"], ...] = (
    ("private notes", re.compile(r"\bspecs?\b|\bspecification\b|§", re.I)),
    ("how the work was done", re.compile(
        r"\b(?:the audit|audit(?:ed|s)? (?:of|on|had|found|showed)|the review(?:er)?s?\b|(?:the )?issues? #?\d+|"
        r"the issue|sessions?|trackers?|turn \d+|tickets?|TODO|the brief|reviewer)\b", re.I)),
    ("code name outside a code span", re.compile(
        r"\b(?:[A-Za-z][\w.-]*/)+[\w.-]*_[\w.-]*|"
        r"(?<![\w\\$`/-])(?<![A-Za-z0-9]\.)(?!(?:[A-Za-z]|alpha|beta|gamma|[dD]elta|eta|zeta|theta|mu|rho|omega|sigma|tau|lambda|psi|"
        r"phi|kappa|epsilon|nu|pi|chi|xi|Omega|Sigma|Gamma|Lambda|Theta|Phi|Psi|Var|dBIC|dAIC|SE)[_.])"
        r"[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*_[A-Za-z0-9]+(?:[_.][A-Za-z0-9]+)*(?![\w`])")),
    ("raw Python value", re.compile(
        r"(?<![\w.])nan(?![\w(])|\[\s*\]|[:=] ?(?:True|False|None)\b|\barray\(|\bnp\.\w+|"
        r"\[\s*-?\d+(?:\.\d+)?(?:e-?\d+)?\s+-?\d+(?:\.\d+)?(?:e-?\d+)?(?:\s+-?\d|\s*\])")),
)
"""The reader-text rules of :func:`reader_text_problems`: (what is wrong, the pattern that finds it). A code name is
a name with an underscore whose first part is not one letter or a Greek letter's name (``K_ref`` and ``eta_c`` are
symbols written in ASCII, ``dr_grpo`` is code)."""

READER_TEXT_ALLOWED_PAGES: tuple[str, ...] = ()
"""Built pages (paths under the HTML folder, ``fnmatch`` patterns) that :func:`reader_text_problems` skips: none.
An entry needs a reason written beside it (a page whose text the reader must see verbatim); generated Markdown that
other layers write is made reader text by :mod:`.reader_copies`, never skipped."""

READER_TEXT_SKIP_TAGS = frozenset({"pre", "code", "kbd", "samp", "mjx-container", "script", "style"})
READER_TEXT_SKIP_CLASSES = (frozenset({"math"}), frozenset({"cell_input"}), frozenset({"headerlink"}),
                            frozenset({"admonition", "note"}))
"""What is not reader text: elements of these tags, or whose classes include one of these sets (code, printed output,
math, the folded provenance box, which names parameters); everything inside them is skipped."""

_VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "menuitem",
                        "meta", "param", "source", "track", "wbr", "basefont", "bgsound", "command", "frame", "image",
                        "isindex", "nextid", "spacer"})
"""Elements without an end tag (HTML's void elements, as BeautifulSoup's tree builder lists them)."""


class _ReaderText(HTMLParser):
    """One pass over a page: the text chunks outside skipped elements, each with the regions it lies in (the first
    ``article.bd-article``, the first ``main``, ``body``). A streaming parser, not a tree: a page's parse and CSS
    selection through BeautifulSoup cost 0.24 s a page on a 2-core AVX2 CPU, this 0.07 s (the same text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, str | None]] = []     # (tag, skipped, region it opened)
        self.skip = 0
        self.regions: dict[str, bool] = {"article": False, "main": False, "body": False}
        self.seen: set[str] = set()
        self.chunks: list[tuple[str, bool, bool, bool]] = []

    def handle_starttag(self, tag, attrs) -> None:
        classes = frozenset(" ".join(v or "" for k, v in attrs if k == "class").split())
        skipped = tag in READER_TEXT_SKIP_TAGS or any(c <= classes for c in READER_TEXT_SKIP_CLASSES)
        region = {"main": "main", "body": "body"}.get(tag)
        if tag == "article" and "bd-article" in classes:
            region = "article"
        if region in self.seen:
            region = None                   # the first of each only, as select_one
        if region is not None:
            self.seen.add(region)
            self.regions[region] = True
        if tag in _VOID_TAGS:
            if region is not None:
                self.regions[region] = False
            return
        self.stack.append((tag, skipped, region))
        self.skip += skipped

    def handle_startendtag(self, tag, attrs) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID_TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag) -> None:
        if not any(t == tag for t, _, _ in self.stack):
            return                              # an end tag nothing opened: ignored
        while self.stack:
            t, skipped, region = self.stack.pop()
            self.skip -= skipped
            if region is not None:
                self.regions[region] = False
            if t == tag:
                return

    def handle_data(self, data) -> None:
        if not self.skip:
            self.chunks.append((data, self.regions["article"], self.regions["main"], self.regions["body"]))


_PRE_BLOCK = re.compile(r"<pre\b[^>]*>.*?</pre>", re.S | re.I)
"""A ``<pre>`` element with its content (highlighted code: three quarters of a notebook page's tags)."""


def page_reader_text(html: str) -> str:
    """The reader text of one built page: its article (else its ``main``, else its ``body``, else the whole page)
    without the elements :data:`READER_TEXT_SKIP_TAGS` and :data:`READER_TEXT_SKIP_CLASSES` name, whitespace
    collapsed."""
    parser = _ReaderText()
    parser.feed(_PRE_BLOCK.sub("<pre></pre>", html))   # a <pre> is skipped whole: its highlighted code not parsed
    parser.close()
    where = next((i for i, r in enumerate(("article", "main", "body"), start=1) if r in parser.seen), None)
    text = " ".join(c[0] for c in parser.chunks if where is None or c[where])
    return re.sub(r"\s+", " ", text).strip()


def text_problems(text: str, limit: int = 5) -> list[str]:
    """What the reader-text rules (:data:`READER_TEXT_RULES`) find in ``text``: per rule, up to ``limit`` phrases,
    each quoted with a few words around it."""
    out = []
    for what, pattern in READER_TEXT_RULES:
        for k, m in enumerate(pattern.finditer(text)):
            if k == limit:
                out.append(f"{what}: … (more)")
                break
            a, b = max(0, m.start() - 30), min(len(text), m.end() + 30)
            out.append(f'{what}: "{m.group(0)}" in "…{text[a:b]}…"')
    return out


def reader_text_problems(html_dir: str | Path, allowed: tuple[str, ...] = READER_TEXT_ALLOWED_PAGES,
                         limit: int = 5) -> dict[str, list[str]]:
    """``{page: [problem, …]}`` for every built page whose reader text breaks a rule of :data:`READER_TEXT_RULES`
    (pages in ``allowed``, search and the index are skipped). Needs no browser."""
    html_dir = Path(html_dir)
    out: dict[str, list[str]] = {}
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir).as_posix()
        if "_static" in path.parts or rel in ("search.html", "genindex.html", "index.html") or any(
                fnmatch.fnmatch(rel, pattern) for pattern in allowed):
            continue
        problems = text_problems(page_reader_text(path.read_text(encoding="utf-8")), limit=limit)
        if problems:
            out[rel] = problems
    return out


@dataclass
class PageReport:
    """What one page loaded and what went wrong."""

    page: str
    math_elements: int = 0
    math_rendered: int = 0
    images: int = 0
    figures: int = 0
    """``<figure>`` elements (numbered, captioned figures)."""
    badges: int = 0
    """Verdict badges on the page."""
    sliders_checked: int = 0
    """Explorer sliders moved and seen to change the plot."""
    first_figure_px: float | None = None
    """Top of the page's first figure, in px from the top of the page (notebook pages; None elsewhere)."""
    problems: list[str] = field(default_factory=list)


_LAYOUT_JS = """() => {
    const out = {problems: []};
    const doc = document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1)
        out.problems.push(`page scrolls horizontally: ${doc.scrollWidth} px wide in a ${window.innerWidth} px window`);
    document.querySelectorAll('table').forEach((t, i) => {
        const box = t.parentElement;
        if (t.offsetParent !== null && box && box.scrollWidth > box.clientWidth + 1)
            out.problems.push(`table ${i + 1} overflows its box (${box.scrollWidth} > ${box.clientWidth} px)`);
    });
    if (document.body.textContent.includes('<matplotlib'))
        out.problems.push('page shows a <matplotlib …> repr');
    const article = document.querySelector('.bd-article, article');
    if (article) {
        // reader text only: code, printed output and the folded provenance box may name parameters
        const copy = article.cloneNode(true);
        copy.querySelectorAll('pre, code, .cell_input, .cell_output, .output, .admonition.note, script, style')
            .forEach(e => e.remove());
        const text = copy.textContent;
        const tracker = text.match(/\\b(issue|issues) #?\d+/i);
        if (tracker) out.problems.push(`tracker language in reader text: "${tracker[0]}"`);
        const param = text.match(/\\bc\\d+_[a-z]\w*/);
        if (param) out.problems.push(`parameter name in reader text: "${param[0]}"`);
    }
    const figures = Array.from(document.querySelectorAll('figure'));
    out.figures = figures.length;
    figures.forEach((f, i) => {
        const cap = f.querySelector('figcaption');
        const text = cap ? cap.innerText.replace(/\s+/g, ' ').trim() : '';
        if (!cap || text.length < 12) out.problems.push(`figure ${i + 1} has no caption`);
        else if (location.pathname.includes('/executed/') && !/^Figure \\d+\\.\\d+\\. /.test(text)) out.problems.push(`figure ${i + 1} has no "Figure <page>.<n>." number`);
    });
    document.querySelectorAll('.cell_output img').forEach((img, i) => {
        if (!img.closest('figure')) out.problems.push(`output image ${img.getAttribute('src')} has no figure/caption`);
    });
    const badges = Array.from(document.querySelectorAll('.verdict-badge'));
    out.badges = badges.length;
    badges.forEach((b, i) => {
        const cell = b.closest('td, th');
        if (!cell || b.offsetParent === null) return;
        const r = b.getBoundingClientRect(), c = cell.getBoundingClientRect();
        if (r.right > c.right + 1 || r.left < c.left - 1)
            out.problems.push(`verdict badge ${i + 1} (${b.textContent}) overflows its table cell`);
    });
    const words = document.querySelector('.bd-article, article');
    if (words) {
        const rng = document.createRange();
        const walker = document.createTreeWalker(words, NodeFilter.SHOW_TEXT);
        let broken = 0, sample = '';
        for (let n = walker.nextNode(); n && broken < 3; n = walker.nextNode()) {
            const text = n.textContent;
            if (!/[A-Za-z]{6,}/.test(text) || n.parentElement.closest('code, pre, .math, mjx-container')) continue;
            // a word split across two lines: its first and last letters sit on different line boxes
            for (const m of text.matchAll(/[A-Za-z]{6,}/g)) {
                rng.setStart(n, m.index); rng.setEnd(n, m.index + 1);
                const a = rng.getBoundingClientRect();
                rng.setStart(n, m.index + m[0].length - 1); rng.setEnd(n, m.index + m[0].length);
                const b = rng.getBoundingClientRect();
                if (a.height && b.height && b.top > a.bottom - 2) { broken += 1; sample = m[0]; break; }
            }
        }
        if (broken) out.problems.push(`words break mid-word (e.g. "${sample}")`);
    }
    if (location.pathname.includes('/executed/')) {
        const firstFig = document.querySelector('article figure, .bd-article figure');
        if (!badges.length) out.problems.push('notebook page shows no verdict badge');
        else if (firstFig) {
            const above = badges[0].compareDocumentPosition(firstFig) & Node.DOCUMENT_POSITION_FOLLOWING;
            const y0 = badges[0].getBoundingClientRect().top, y1 = firstFig.getBoundingClientRect().top;
            if (!above || y0 >= y1) out.problems.push('the first verdict badge is not above the first figure');
        }
        if (firstFig) {
            out.first_figure_px = Math.round(firstFig.getBoundingClientRect().top + window.scrollY);
            if (window.innerWidth >= 1000 && out.first_figure_px > __MAX_FIRST_FIGURE__)
                out.problems.push(`the first figure starts ${out.first_figure_px} px down (at most __MAX_FIRST_FIGURE__)`);
        }
    }
    return out;
}""".replace("__MAX_FIRST_FIGURE__", str(MAX_FIRST_FIGURE_PX))

_EXPLORER_JS = """() => {
    const root = document.getElementById('rlvr-explorer');
    if (!root) return null;
    const snap = () => Array.from(root.querySelectorAll('svg path.curve, svg circle.marker, svg polyline.threshold'))
        .map(e => e.getAttribute('d') || e.getAttribute('points') || (e.getAttribute('cx') + ',' + e.getAttribute('cy')))
        .join('|') + root.querySelector('.readout').textContent;
    const out = {checked: 0, problems: []};
    const sliders = Array.from(root.querySelectorAll('input[type=range]'));
    if (!sliders.length) out.problems.push('explorer has no sliders');
    if (!root.querySelector('svg path.curve')) out.problems.push('explorer drew no reward curve');
    if (!root.querySelector('svg polyline.threshold')) out.problems.push('explorer drew no stability threshold');
    if (!root.querySelector('svg polyline.regime-boundary')) out.problems.push('explorer drew no regime boundary');
    for (const s of sliders) {
        const before = snap();
        const old = s.value;
        s.value = String(Number(old) === Number(s.max) ? Number(s.min) : Number(s.max));
        s.dispatchEvent(new Event('input', {bubbles: true}));
        const after = snap();
        if (after === before) out.problems.push(`moving slider ${s.id} did not change the plot`);
        else out.checked += 1;
        s.value = old;
        s.dispatchEvent(new Event('input', {bubbles: true}));
    }
    return out;
}"""


def find_chromium() -> str | None:
    """Path of a Chromium binary, or None: Debian's ``chromium-headless-shell`` first (the old headless mode: the
    check loads a page in about half the time the full browser's new headless mode takes), then ``chromium``."""
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built book quietly over keep-alive connections, every file cacheable for the check's duration (the
    book's shared scripts, styles and fonts are fetched and compiled once, not once per page)."""

    protocol_version = "HTTP/1.1"

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=3600")
        super().end_headers()

    def log_message(self, *args) -> None:  # noqa: D401 - silence the access log
        pass


def check_book(html_dir: str | Path, pages: list[str] | None = None, screenshot: str | Path | None = None,
               screenshot_page: str = "intro.html", timeout_ms: int = 30000,
               screenshot_height: int = 1500) -> list[PageReport]:
    """Check ``pages`` (default: every ``*.html`` except search, genindex and the index redirect) of the built book
    in ``html_dir``; the screenshot shows the top ``screenshot_height`` px of ``screenshot_page``."""
    from playwright.sync_api import sync_playwright

    html_dir = Path(html_dir)
    if not (html_dir / "index.html").exists():
        raise ValueError(f"html_dir {html_dir} holds no built book (index.html missing)")
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium found: apt-get install chromium-headless-shell")
    if pages is None:
        pages = sorted(str(p.relative_to(html_dir)) for p in html_dir.rglob("*.html")
                       if str(p.relative_to(html_dir)) not in ("search.html", "genindex.html", "index.html") and "_static" not in p.parts)
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))   # bound, never listening: connections to it are refused
    reports: list[PageReport] = []
    try:
        with sync_playwright() as pw:
            # every request that does not go to the book's server goes to a proxy that refuses connections (a bound
            # socket that does not listen): it fails in the browser and is reported below. No request interception
            # (page.route), which would turn the browser's cache off and route every request through Python.
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS,
                                         proxy={"server": f"http://127.0.0.1:{dead.getsockname()[1]}",
                                                "bypass": "127.0.0.1"})
            context = browser.new_context(viewport=VIEWPORT)
            # one tab for every page (a new tab per page took ~30 % longer to load each): its listeners report to
            # the page being checked, and to none while the tab is sent to about:blank between pages (requests the
            # previous page left pending are cancelled there, not charged to the next page)
            page = context.new_page()
            current: list[PageReport | None] = [None]

            def note(problem: str) -> None:
                if current[0] is not None:
                    current[0].problems.append(problem)

            page.on("request", lambda req: None if req.url.startswith(base) or req.url.startswith("data:")
                    or req.url == "about:blank" else note(f"external request blocked: {req.url}"))
            page.on("requestfailed", lambda req: note(f"request failed: {req.url} ({req.failure})")
                    if req.url.startswith(base) else None)
            page.on("response", lambda resp: note(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
            for rel in pages:
                report = PageReport(rel)
                page.set_viewport_size(VIEWPORT)
                current[0] = report
                page.goto(base + rel, wait_until="load", timeout=timeout_ms)   # images and scripts loaded
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
                layout = page.evaluate(_LAYOUT_JS)
                report.figures, report.badges = layout["figures"], layout["badges"]
                report.problems += layout["problems"]
                explorer = page.evaluate(_EXPLORER_JS)
                if explorer is not None:
                    report.sliders_checked = explorer["checked"]
                    report.problems += explorer["problems"]
                report.first_figure_px = layout.get("first_figure_px")
                if screenshot is not None and rel == screenshot_page:
                    page.set_viewport_size({"width": VIEWPORT["width"], "height": screenshot_height})
                    page.wait_for_timeout(300)
                    page.screenshot(path=str(screenshot), full_page=False)
                reports.append(report)
                # the same page at phone width: no second load
                narrow = PageReport(f"{rel} @ {NARROW_VIEWPORT['width']} px")
                page.set_viewport_size(NARROW_VIEWPORT)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                layout = page.evaluate(_LAYOUT_JS)
                narrow.figures, narrow.badges = layout["figures"], layout["badges"]
                narrow.problems += [p for p in layout["problems"]
                                    if rel in NARROW_PAGES or p.startswith("page scrolls horizontally")]
                current[0] = None
                page.goto("about:blank", timeout=timeout_ms)
                reports.append(narrow)
            browser.close()
    finally:
        server.shutdown()
        dead.close()
    return reports
