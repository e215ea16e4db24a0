"""baseline: one storage LNet per storage fabric, every router of the fabric equal — for
comparison only.

Traffic crosses the storage fabric's spine whenever LNet picks a router on another leaf; this
is the configuration fine-grained routing replaces.  Fabrics that are not connected get a net
each: one LNet across them would hand clients gateways that cannot reach the servers.
"""

from __future__ import annotations

from lnetgen.model import Site
from lnetgen.strategies.base import NetSpec, Strategy

NAME = "baseline"


def design(site: Site) -> list[NetSpec]:
    storage = [f.name for f in site.fabrics if f.role == "storage"]
    several = len({s.fabric for s in site.servers}) > 1
    specs = []
    for fabric in storage:
        servers = [s for s in site.servers if s.fabric == fabric]
        if not servers:
            continue
        routers = [r for r in site.routers if _fabric(site, r.attach.switch) == fabric]
        specs.append(
            NetSpec(
                servers,
                routers,
                None,
                group=fabric if several else "all",
                why=f"baseline: every router of {fabric} equal"
                if several
                else "baseline: every router equal",
            )
        )
    return specs


def _fabric(site: Site, switch: str) -> str:
    sw = site.switch(switch)
    return sw.fabric if sw is not None else ""


STRATEGY = Strategy(
    NAME,
    "one storage LNet per storage fabric, all its routers equal (comparison only; crosses the "
    "spine)",
    design,
    leaf_local=False,
)
