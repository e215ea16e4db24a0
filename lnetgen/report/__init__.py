"""The HTML report: a site's storage fabric, torus link loads (or, on a dragonfly, where the
client <-> router flows go), load histograms and failure summary as one self-contained HTML
file with inline SVG (no script, nothing fetched).

Entry points: :func:`build_report` (site and strategies -> :class:`Report`), :func:`render_html`
(:class:`Report` -> HTML text), :func:`html_report` (both), :func:`link_load_arrays` (the torus
link loads of a plan as two (X, Y, Z, 6) arrays) and :func:`clients_per_router`.

Inside, layers depend downwards only: ``render`` (HTML) on ``page`` (the report, shared scales)
on one module per picture (``fabric``, ``torus``, ``dragonfly``, ``histograms``, ``failures``),
which stand on ``solved`` (each strategy solved and analyzed), ``data`` (what the templates
read) and ``svg`` (shapes, ticks, short texts).
"""

from lnetgen.analyze import link_load_arrays
from lnetgen.report.data import (
    DragonflyView,
    FabricView,
    FailureView,
    Figure,
    Message,
    Report,
    StrategyView,
    Table,
    TorusPhase,
)
from lnetgen.report.fabric import NET_COLOURS
from lnetgen.report.page import (
    COMPARE_MAX_SLICES,
    COMPARE_MAX_SWITCHES,
    MAX_SLICES,
    MAX_SWITCHES,
    build_report,
)
from lnetgen.report.render import environment, html_report, num, render_html, render_svg
from lnetgen.report.solved import clients_per_router
from lnetgen.report.svg import PAGE_WIDTH, Circle, Line, Poly, Rect, Shape, Svg, Text
from lnetgen.report.torus import HEAT_BINS

__all__ = [
    "COMPARE_MAX_SLICES",
    "COMPARE_MAX_SWITCHES",
    "HEAT_BINS",
    "MAX_SLICES",
    "MAX_SWITCHES",
    "NET_COLOURS",
    "PAGE_WIDTH",
    "Circle",
    "DragonflyView",
    "FabricView",
    "FailureView",
    "Figure",
    "Line",
    "Message",
    "Poly",
    "Rect",
    "Report",
    "Shape",
    "StrategyView",
    "Svg",
    "Table",
    "Text",
    "TorusPhase",
    "build_report",
    "clients_per_router",
    "environment",
    "html_report",
    "link_load_arrays",
    "num",
    "render_html",
    "render_svg",
]
