"""What ``lnetgen analyze``, ``compare`` and ``place`` share: the ``--format`` option, the
site and its plan (solved, or read from ``--plan``), the model settings, and how figures are
printed.  (``--plan`` itself is ``lnetgen.cli.common.plan_option``, re-exported here.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from lnetgen.cli.common import plan_option, print_diags

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


def model_settings(
    site: Site, link_mb_s: float | None, ost_mb_s: float | None, weight_by: str
) -> Settings:
    """The model's settings from the options of ``model_options``; a rate not given is the
    site's (``rates:``), or unknown."""
    from lnetgen.traffic.settings import settings_for

    return settings_for(site, link_mb_s, ost_mb_s, weight_by)


def load_plan(
    site_path: str, strategy: str | None, plan_path: str | None, force: bool = False
) -> tuple[Site, Plan]:
    """The site and its plan: solved, or read from ``plan_path`` (refused when SITE changed
    since it was solved, unless ``force``); prints the warnings."""
    from lnetgen.api import load_plan as load

    site, plan, warnings = load(site_path, strategy, plan_path, force=force)
    print_diags(warnings)
    return site, plan


def num(x: float, digits: int = 2) -> str:
    """A figure with ``digits`` decimals, as every report prints them; "n/a" when unknown."""
    return f"{x:.{digits}f}" if math.isfinite(x) else "n/a"


__all__ = ["format_option", "load_plan", "model_settings", "num", "plan_option"]
