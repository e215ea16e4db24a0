"""What ``lnetgen analyze``, ``compare`` and ``place`` share: the ``--format`` and ``--plan``
options, the site and its plan (solved, or read from ``--plan``), the model settings, and how
figures are printed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from lnetgen.cli.common import print_diags

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # the library is imported lazily at run time
    from lnetgen.analyze import Settings
    from lnetgen.model import Site
    from lnetgen.plan import Plan


def format_option(fn: F) -> F:
    """``--format text|json``."""
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
    )(fn)


def plan_option(fn: F) -> F:
    """``--plan plan.json``, instead of solving the site."""
    return click.option(
        "--plan",
        "plan_path",
        type=click.Path(exists=True, dir_okay=False),
        default=None,
        help="analyze this plan.json (from `lnetgen solve --out`) instead of solving SITE",
    )(fn)


def model_settings(link_mb_s: float, ost_mb_s: float, weight_by: str) -> Settings:
    """The model's settings from the options of ``model_options``."""
    from lnetgen.analyze import Settings

    return Settings(link_mb_s, ost_mb_s, weight_by)


def load_plan(site_path: str, strategy: str | None, plan_path: str | None) -> tuple[Site, Plan]:
    """The site and its plan: solved, or read from ``plan_path`` (checked against the site)."""
    from lnetgen.api import load_site
    from lnetgen.diagnostics import Diagnostic, InputError
    from lnetgen.plan import Plan
    from lnetgen.solve import solve

    if plan_path and strategy:
        raise click.UsageError("give --strategy or --plan, not both")
    site, warnings = load_site(site_path)
    print_diags(warnings)
    if not plan_path:
        return site, solve(site, strategy)
    try:
        with open(plan_path, encoding="utf-8") as fh:
            plan = Plan.from_json(fh.read())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            [Diagnostic(plan_path, 0, 0, "error", "E-PLAN", "$", f"not a plan.json: {exc}")]
        ) from None
    if plan.inventory_digest != site.digest:
        print_diags(
            [
                Diagnostic(
                    plan_path,
                    0,
                    0,
                    "warning",
                    "W-PLAN-DIGEST",
                    "$.inventory_digest",
                    f"the plan was solved from another version of {site_path}",
                )
            ]
        )
    return site, plan


def num(x: float, digits: int = 2) -> str:
    """A figure with ``digits`` decimals, as every report prints them."""
    return f"{x:.{digits}f}"
