"""round-robin: one storage LNet per leaf module (a *set* of routers + servers); per set, each
client is given one of the set's routers in turn, so router loads differ by at most one.

The chosen router is the priority-0 gateway; the set's other routers stay in the table at
priority 1 so a router failure degrades to another router on the same leaf instead of losing
the net.  Clients are dealt out per client net in inventory order: client k of a net gets
router k mod R of the set.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lnetgen.model import Router, Site
from lnetgen.strategies.base import NetSpec, Strategy, leaf_sets

NAME = "round-robin"


def design(site: Site) -> list[NetSpec]:
    def pick(members: npt.NDArray[np.intp], routers: list[Router]) -> npt.NDArray[np.intp]:
        # client k of a client net (k counts that net's clients in inventory order)
        return np.arange(len(members)) % len(routers)

    return leaf_sets(site, pick, "round-robin over the routers of {leaf}")


STRATEGY = Strategy(
    NAME,
    "one LNet per leaf module; each client gets one of its routers in "
    "turn (loads differ by at most one)",
    design,
)
