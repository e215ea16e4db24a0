"""Single-hop LNet reachability from one endpoint's state: the verdict on each of its routes
(gateway on the sender's net, owned by a host that forwards and has an NI on the destination
net, hop 1) and, per destination net, whether it is reached directly, at the best priority
(UDSP-preferred gateways, ``udsp:`` router rules, rank before the priority, as LNet picks them)
present, only at a worse one, or not at all.  Each route and each (endpoint, net) is judged
once, whatever the number of pairs that ask."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lnetgen.udsp import Rule, preferred
from lnetgen.verify.world import Endpoint, World

#: Reach statuses: on a shared net, routed at the best priority, only at a worse priority,
#: routes present but none works, no route at all.
DIRECT, HOLD, BACKUP, BROKEN, NONE = "direct", "hold", "backup", "broken", "none"


_RANK = {DIRECT: 0, HOLD: 0, BACKUP: 1, BROKEN: 2, NONE: 3}


def net_of(nid: str) -> str:
    return nid.rpartition("@")[2]


def _rank(rules: tuple[Rule, ...], net: str, route: RouteVerdict) -> tuple[int, int]:
    """The order LNet picks routes to ``net`` in: a UDSP-preferred gateway first (when the
    endpoint has router rules for the net), then the lower priority."""
    if any(r.dst == net and r.rte for r in rules):
        return (0 if preferred(rules, net, route.gateway) else 1, route.priority)
    return (0, route.priority)


@dataclass(frozen=True)
class RouteVerdict:
    """One route of an endpoint and what is wrong with it (``problems``: (code, message))."""

    net: str
    gateway: str
    hop: int
    priority: int
    router: str | None
    problems: tuple[tuple[str, str], ...]

    @property
    def works(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Reach:
    """How an endpoint reaches one net."""

    net: str
    status: str
    routes: tuple[RouteVerdict, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in (DIRECT, HOLD, BACKUP)

    @property
    def routers(self) -> frozenset[str]:
        """Router hosts of every route to the net, whatever its priority."""
        return frozenset(r.router for r in self.routes if r.router is not None)

    def routers_via(self, local_net: str) -> frozenset[str]:
        """Router hosts of the routes whose gateway is on ``local_net``."""
        return frozenset(
            r.router for r in self.routes if r.router is not None and net_of(r.gateway) == local_net
        )


class Prover:
    """Judges routes and reachability over a ``World``, caching per endpoint and net."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._verdicts: dict[str, dict[str, list[RouteVerdict]]] = {}
        self._reach: dict[tuple[str, str], Reach] = {}
        self._any: dict[tuple[str, tuple[str, ...]], tuple[int, Reach | None]] = {}
        self._routes: dict[tuple[str, str, int, int], RouteVerdict] = {}
        self._via: dict[tuple[str, str, str], frozenset[str]] = {}

    def routers_via(self, ep: Endpoint, r: Reach, local_net: str) -> frozenset[str]:
        """``r.routers_via(local_net)`` for ``ep``'s reach ``r``, cached per endpoint."""
        key = (ep.name, r.net, local_net)
        got = self._via.get(key)
        if got is None:
            got = r.routers_via(local_net)
            self._via[key] = got
        return got

    def _judge(self, ep: Endpoint, net: str, gw: str, hop: int, prio: int) -> RouteVerdict:
        gw_net = net_of(gw)
        rest = self._gateway_side(net, gw, hop, prio)
        if gw_net in ep.nets:
            return rest  # what is judged does not depend on the sender: shared
        have = ", ".join(sorted(ep.nets)) or "none"
        mine = (
            "V-GW-NOT-ON-NET",
            f"gateway {gw} is on {gw_net}, not on a net of {ep.name} (its NIs: {have})",
        )
        return dataclasses.replace(rest, problems=(mine, *rest.problems))

    def _gateway_side(self, net: str, gw: str, hop: int, prio: int) -> RouteVerdict:
        """The verdict on a route with a sender on the gateway's net (hop, gateway owner,
        forwarding, its NIs): cached, since every client of a tree repeats the same routes."""
        key = (net, gw, hop, prio)
        got = self._routes.get(key)
        if got is None:
            got = self._judge_gateway(net, gw, hop, prio)
            self._routes[key] = got
        return got

    def _judge_gateway(self, net: str, gw: str, hop: int, prio: int) -> RouteVerdict:
        problems: list[tuple[str, str]] = []
        gw_net = net_of(gw)
        if hop != 1:
            shown = "not declared" if hop < 0 else str(hop)
            problems.append(
                (
                    "V-HOP",
                    f"route to {net} via {gw}: hop {shown}, FGR routes are single hop (hop: 1)",
                )
            )
        owner = self.world.nid_owner.get(gw)
        gw_ep = self.world.by_host.get(owner) if owner is not None else None
        if owner is None or gw_ep is None:
            why = "no host owns that NID" if owner is None else f"no file configures {owner}"
            problems.append(("V-GW-UNKNOWN", f"route to {net} via {gw}: {why}"))
        else:
            if not gw_ep.state.routing:
                problems.append(
                    (
                        "V-GW-NOT-ROUTER",
                        f"route to {net} via {gw}: {owner} ({gw_ep.role}) "
                        "does not forward (routing not enabled)",
                    )
                )
            if net not in gw_ep.nets:
                problems.append(
                    (
                        "V-GW-NO-REMOTE-NI",
                        f"route to {net} via {gw}: {owner} has no NI on "
                        f"{net}, so the route is not single hop",
                    )
                )
            if gw_net not in gw_ep.nets:
                problems.append(
                    ("V-GW-NOT-ON-NET", f"route to {net} via {gw}: {owner} has no NI on {gw_net}")
                )
        return RouteVerdict(net, gw, hop, prio, owner, tuple(problems))

    def verdicts(self, ep: Endpoint) -> dict[str, list[RouteVerdict]]:
        """net -> the verdict on each of ``ep``'s routes to it, by (priority, gateway)."""
        got = self._verdicts.get(ep.name)
        if got is None:
            got = {}
            table = ep.state.routes.routes if ep.state.routes is not None else {}
            for (net, gw), (hop, prio) in sorted(table.items()):
                got.setdefault(net, []).append(self._judge(ep, net, gw, hop, prio))
            rules = ep.state.udsp or ()
            for net, rs in got.items():
                rs.sort(key=lambda r, n=net: (_rank(rules, n, r), r.gateway))  # type: ignore[misc]
            self._verdicts[ep.name] = got
        return got

    def reach(self, ep: Endpoint, net: str) -> Reach:
        """How ``ep`` reaches ``net``: a pair holds when some route at the best priority
        present works; works only at a worse priority -> ``BACKUP``."""
        key = (ep.name, net)
        got = self._reach.get(key)
        if got is None:
            routes = tuple(self.verdicts(ep).get(net, ()))
            if net in ep.nets:
                got = Reach(net, DIRECT, routes)
            elif not routes:
                got = Reach(net, NONE)
            else:
                rules = ep.state.udsp or ()
                best = _rank(rules, net, routes[0])
                working = [_rank(rules, net, r) for r in routes if r.works]
                if not working:
                    status = BROKEN
                elif working[0] == best:
                    status = HOLD
                else:
                    status = BACKUP
                got = Reach(net, status, routes)
            self._reach[key] = got
        return got

    def reach_any(self, ep: Endpoint, nids: tuple[str, ...]) -> tuple[str, Reach | None]:
        """The best way ``ep`` reaches one of ``nids`` (direct/hold first, in ``nids``
        order): (NID, reach); ("", None) when ``nids`` is empty."""
        nets = tuple(net_of(nid) for nid in nids)
        key = (ep.name, nets)
        got = self._any.get(key)
        if got is None:
            got = (-1, None)
            for i, net in enumerate(nets):
                r = self.reach(ep, net)
                if got[1] is None or _RANK[r.status] < _RANK[got[1].status]:
                    got = (i, r)
            self._any[key] = got
        return (nids[got[0]], got[1]) if got[1] is not None else ("", None)
