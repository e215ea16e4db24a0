"""The report as HTML: the Jinja2 environment on ``templates/report/``, one picture as an
``<svg>`` element, and the whole page as one self-contained document (no script, nothing
fetched).

Every string that reaches the page is escaped by the environment (autoescape on), so names from
the inventory cannot inject markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import jinja2

from lnetgen.diagnostics import Diagnostic
from lnetgen.emit.base import make_environment
from lnetgen.model import Site
from lnetgen.report.data import Report
from lnetgen.report.page import build_report
from lnetgen.report.svg import Svg


def num(v: float) -> str:
    """A coordinate as short text: ``12``, ``12.5``."""
    r = round(float(v), 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


@cache
def environment() -> jinja2.Environment:
    """The report's Jinja2 environment: the shipped templates directory, autoescape on."""
    env = make_environment(autoescape=True)
    env.filters["num"] = num
    return env


def render_svg(svg: Svg) -> str:
    """One picture as an ``<svg>`` element (what the report inlines)."""
    return environment().get_template("report/svg.html.j2").module.svg(svg)  # type: ignore[attr-defined,no-any-return]


def render_html(report: Report) -> str:
    """The whole report as one self-contained HTML document."""
    return environment().get_template("report/report.html.j2").render(r=report)


def html_report(
    site: Site,
    strategies: Sequence[str],
    warnings: Sequence[Diagnostic] = (),
    **options: Any,
) -> str:
    """:func:`build_report` then :func:`render_html`."""
    return render_html(build_report(site, strategies, warnings, **options))
