"""Problems in the route tables themselves, present before anything fails: routes dead on
paper and hop counts other than 1.

A route is dead on paper when its gateway has no interface on the remote net
(``avoid_asym_router_failure`` marks such single-hop routes down), none on the sender's own
net, is not on the sender's net at all, or is no router.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnetgen import nodes


@dataclass(frozen=True)
class Finding:
    """A problem in the route tables themselves (present before anything fails)."""

    code: str
    message: str
    count: int = 1  # how many routes/pairs it covers


# why a route is dead on paper (0 = alive)
_DEAD_REASONS = {
    1: "gateway {gw} is not a router NID in the plan",
    2: "gateway {gw} ({router}) has no interface on {net}, so LNet marks the single-hop route "
    "down (avoid_asym_router_failure)",
    3: "gateway {gw} ({router}) has no interface on the sender's net {local}",
    4: "gateway {gw} is not on the sender's net {local}, so the sender cannot reach it",
}


def route_reason(
    ri: int,
    router_nets: list[frozenset[str]],
    net: str,
    local: str,
    gw_net: dict[str, str],
    gateway: str,
) -> int:
    """Why the route to ``net`` through ``gateway`` (router ``ri``, -1 for none) from a sender
    on ``local`` is dead on paper, 0 when it is alive.  ``gw_net`` caches gateway NID -> net."""
    if ri < 0:
        return 1
    if net not in router_nets[ri]:
        return 2
    if local not in router_nets[ri]:
        return 3
    on = gw_net.get(gateway)
    if on is None:
        try:
            on = gw_net[gateway] = nodes.canonical_net(gateway.rpartition("@")[2])
        except nodes.NodeSyntaxError:
            on = gw_net[gateway] = ""
    return 0 if on == local else 4


def reason_text(
    reason: int, gw: str, net: str, local: str, routers: tuple[str, ...], nid_router: dict[str, int]
) -> str:
    ri = nid_router.get(gw, -1)
    return _DEAD_REASONS[reason].format(
        gw=gw, router=routers[ri] if ri >= 0 else "?", net=net, local=local
    )


def hop_text(side: str, net: str, hop: int) -> str:
    if hop < 0:
        return (
            f"{side} route(s) to {net} have no hop count (LNet reads it as undefined, -1): "
            "the avoid_asym_router_failure check may not apply, so the route stays up when "
            "the gateway's far interface is down; declare hop 1"
        )
    return (
        f"{side} route(s) to {net} declare hop {hop}: a fine-grained route is single-hop, and "
        "LNet then skips the check that the gateway's far interface is alive"
    )
