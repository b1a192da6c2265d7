"""Load MathJax on every page: the navigation sidebar shows notebook titles with math (e.g. $1/G$) on pages that
have no math of their own, where Sphinx would otherwise leave MathJax out and show raw TeX."""


def setup(app):
    app.set_html_assets_policy("always")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
