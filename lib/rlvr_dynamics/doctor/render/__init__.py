"""The render stage: a report (:meth:`~rlvr_dynamics.doctor.report.Report.to_dict`) as text, JSON or HTML.

- :mod:`.text`: :func:`format_report`, what ``rlvr-dynamics fit LOG`` prints;
- :mod:`.json`: :func:`to_json`, ``fit --json``;
- :mod:`.html` (page), :mod:`.figure` (the figure and its caption), :mod:`.summary` (name, hyper-parameters,
  verdict, fired detectors): ``fit --html/--png``. matplotlib is imported only when a figure is drawn.
"""
from .figure import MIN_FONT_PT, dynamics_columns, figure_caption, report_figure
from .html import render_html, write_report
from .json import to_json
from .summary import display_status, hyperparameter_rows, run_name_from_path
from .text import format_report, short_report

__all__ = ["format_report", "short_report", "to_json", "render_html", "write_report", "report_figure", "figure_caption",
           "dynamics_columns", "display_status", "hyperparameter_rows", "run_name_from_path", "MIN_FONT_PT"]
