"""The report as plain data: the frozen dataclasses ``templates/report/report.html.j2`` loops
over (the page, each strategy's view, figures, tables, messages), with nothing left to compute.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnetgen.report.svg import Svg


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]  # right-align this column


@dataclass(frozen=True)
class Figure:
    """A picture with a heading above and a caption below."""

    title: str
    svg: Svg
    caption: str = ""


@dataclass(frozen=True)
class FabricView:
    name: str
    svg: Svg | None
    notes: tuple[str, ...]  # what is not drawn, in words


@dataclass(frozen=True)
class TorusPhase:
    name: str  # writes | reads
    headline: str
    maps: tuple[Figure, ...]  # overview first, then the slices


@dataclass(frozen=True)
class FailureView:
    headline: str
    worst: Table | None


@dataclass(frozen=True)
class StrategyView:
    strategy: str
    error: str
    headline: str
    fabrics: tuple[FabricView, ...]
    torus: tuple[TorusPhase, ...]
    router_hist: Figure | None
    link_hist: Figure | None
    failure: FailureView | None
    findings: tuple[tuple[str, str, int], ...]  # code, message, count


@dataclass(frozen=True)
class DragonflyView:
    """The dragonfly client side of every layout (``lnetgen.report.dragonfly``)."""

    headline: str  # the site's dragonfly, in analyze's words
    figure: Figure  # one stacked bar per layout and direction
    table: Table  # one row per layout and direction, analyze's figures


@dataclass(frozen=True)
class Message:
    severity: str
    code: str
    where: str
    text: str


@dataclass(frozen=True)
class Report:
    title: str
    site: str
    description: str
    version: str
    digest: str
    mode: str  # single | compare
    facts: tuple[tuple[str, str], ...]  # (label, value) about the site
    model: str  # the traffic model in one sentence
    summary: Table
    failure_chart: Figure | None
    views: tuple[StrategyView, ...]
    heat_legend: Svg | None
    fabric_legend: Svg
    warnings: tuple[Message, ...]
    compute_note: str
    #: the legend of the summary's predicted figures (which are upper bounds, and why)
    predicted_note: str = ""
    #: the rates the page uses: "<inventory entry: source> [what uses it]" or the option
    rates: tuple[str, ...] = ()
    #: on a dragonfly client side: where each layout's client <-> router flows go
    dragonfly: DragonflyView | None = None
