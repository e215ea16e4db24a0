"""projection (ORNL production): one storage LNet per server, reached through the router(s)
paired with it on its leaf module.

Pairing on a leaf with R routers and S servers (inventory order): R == S pairs i<->i; R > S gives
router j to server j mod S (servers get ceil/floor of R/S routers); R < S gives server i the
router i mod R (a router then has an interface on several server nets).
"""

from __future__ import annotations

from lnetgen.model import Site
from lnetgen.strategies.base import NetSpec, Strategy, label, modules

NAME = "projection"


def design(site: Site) -> list[NetSpec]:
    specs: list[NetSpec] = []
    for module, servers, routers in modules(site):
        R, S = len(routers), len(servers)
        for i, srv in enumerate(servers):
            mine = [routers[j] for j in range(R) if j % S == i] if R >= S else [routers[i % R]]
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


STRATEGY = Strategy(
    NAME,
    "one LNet per OSS/MDS, through the router(s) paired with it on its leaf (ORNL Spider)",
    design,
)
