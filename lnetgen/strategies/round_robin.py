"""round-robin: one storage LNet per leaf module (a *set* of routers + servers); per set, each
client is given one of the set's routers in turn, so router loads differ by at most one.

The chosen router is the priority-0 gateway; the set's other routers stay in the table at
priority 1 so a router failure degrades to another router on the same leaf instead of losing
the net.  Clients are dealt out per client net in inventory order: client k of a net gets
router k mod R of the set.
"""

from __future__ import annotations

import numpy as np

from lnetgen.model import Site
from lnetgen.strategies.base import NetSpec, Strategy, label, modules

NAME = "round-robin"


def per_net_positions(site: Site) -> tuple[np.ndarray, np.ndarray]:
    """For each client: its client-net index and its rank among clients of that net."""
    net = site.clients.net_index
    rank = np.zeros(len(net), dtype=np.int64)
    for k in np.unique(net):
        idx = np.nonzero(net == k)[0]
        rank[idx] = np.arange(len(idx))
    return net, rank


def routers_by_net(site: Site, routers: list) -> dict[int, list[int]]:  # type: ignore[type-arg]
    nets = site.clients.nets
    out: dict[int, list[int]] = {}
    for k, net in enumerate(nets):
        out[k] = [j for j, r in enumerate(routers) if r.client_net == net]
    return out


def design(site: Site) -> list[NetSpec]:
    net, rank = per_net_positions(site)
    specs: list[NetSpec] = []
    for module, servers, routers in modules(site):
        choice = np.zeros(len(net), dtype=np.int32)
        for k, idx in routers_by_net(site, routers).items():
            members = net == k
            if not idx:
                continue  # coverage check reports the missing gateway
            choice[members] = np.asarray(idx, dtype=np.int32)[rank[members] % len(idx)]
        specs.append(
            NetSpec(
                servers,
                routers,
                module,
                group=label(module),
                choice=choice,
                why=f"round-robin over the routers of {label(module)}",
            )
        )
    return specs


STRATEGY = Strategy(
    NAME,
    "one LNet per leaf module; each client gets one of its routers in "
    "turn (loads differ by at most one)",
    design,
)
