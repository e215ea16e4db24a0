"""baseline: one storage LNet for every server, every router equal — for comparison only.

Traffic crosses the storage fabric's spine whenever LNet picks a router on another leaf; this
is the configuration fine-grained routing replaces.
"""

from __future__ import annotations

from lnetgen.model import Site
from lnetgen.strategies.base import NetSpec, Strategy

NAME = "baseline"


def design(site: Site) -> list[NetSpec]:
    return [
        NetSpec(
            list(site.servers),
            list(site.routers),
            None,
            group="all",
            why="baseline: every router equal",
        )
    ]


STRATEGY = Strategy(
    NAME,
    "one storage LNet, all routers equal (comparison only; crosses the spine)",
    design,
    leaf_local=False,
)
