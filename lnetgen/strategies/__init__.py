"""Routing layouts.  Each strategy is one module; ``REGISTRY`` maps its name to it.

A strategy turns a ``Site`` into a list of ``NetSpec`` (one storage LNet each: its servers, the
routers clients use at priority 0, backups, and optionally a per-client choice of router).  The
generic ``lnetgen.solve`` turns that into a ``Plan``; adding a layout touches one module and the
table below.
"""

from __future__ import annotations

from lnetgen.strategies import baseline, groups, nearest, projection, round_robin
from lnetgen.strategies.base import NetSpec, SolveError, Strategy

REGISTRY: dict[str, Strategy] = {
    s.NAME: s.STRATEGY for s in (projection, round_robin, nearest, groups, baseline)
}

__all__ = ["REGISTRY", "NetSpec", "SolveError", "Strategy"]
