"""projection (ORNL production): one storage LNet per server, reached through the router(s)
paired with it on its leaf module.

Pairing on a leaf with R routers and S servers (inventory order): R == S pairs i<->i; R > S gives
router j to server j mod S (servers get ceil/floor of R/S routers); R < S gives server i the
router i mod R (a router then has an interface on several server nets).  With several client
nets the pairing is made per client net, among the leaf's routers on that net, so that every
server is reached from every client net (a gni router and a tcp router on one leaf both serve
each of its servers' nets).
"""

from __future__ import annotations

from lnetgen.model import Router, Site
from lnetgen.strategies.base import NetSpec, Strategy, label, modules

NAME = "projection"


def design(site: Site) -> list[NetSpec]:
    specs: list[NetSpec] = []
    for module, servers, routers in modules(site):
        per_net = [
            [r for r in routers if r.client_net == c.net]
            for c in site.client_nets
            if any(r.client_net == c.net for r in routers)
        ]
        for i, srv in enumerate(servers):
            mine = [r for rs in per_net for r in _paired(rs, len(servers), i)]
            specs.append(
                NetSpec(
                    [srv],
                    mine,
                    module,
                    group=srv.name,
                    why=f"projection: paired with {srv.name} on {label(module)}",
                )
            )
    return specs


def _paired(routers: list[Router], servers: int, i: int) -> list[Router]:
    """The routers of one client net paired with server ``i`` of ``servers`` on a leaf."""
    R, S = len(routers), servers
    return [routers[j] for j in range(R) if j % S == i] if R >= S else [routers[i % R]]


STRATEGY = Strategy(
    NAME,
    "one LNet per OSS/MDS, through the router(s) paired with it on its leaf (ORNL Spider)",
    design,
)
