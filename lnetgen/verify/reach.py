"""Single-hop LNet reachability from one endpoint's state: the verdict on each of its routes
(gateway on the sender's net, owned by a host that forwards and has an NI on the destination
net, hop 1) and, per destination net, whether it is reached directly, at the best priority
(UDSP-preferred gateways of working router rules rank before the priority, as LNet picks them;
a rule with a priority action is never applied and ranks nothing: ``lnetgen.udsp``)
present, only at a worse one, or not at all.  Each route and each (endpoint, net) is judged
once, whatever the number of pairs that ask; endpoints with the same NIs and the same routes to
a net (most client classes of a nearest-neighbor tree, whose whole tables all differ) share
that judgement, unless it names the endpoint."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter

from lnetgen.live.state import RouteKey
from lnetgen.udsp import Rule, preferred, working
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


def _ruled(rules: tuple[Rule, ...]) -> frozenset[str]:
    """The nets ``rules`` hold router rules for: on every other net ``_rank`` is the priority."""
    return frozenset(r.dst for r in rules if r.rte)


#: The order of the routes to a net without router rules: ``_rank`` is (0, priority) there.
_BY_PRIORITY = attrgetter("priority", "gateway")

#: A route as its table lists it: ((net, gateway), (hop, priority)).
Route = tuple[RouteKey, tuple[int, int]]


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


class Way:
    """How a sender reaches one net it has routes to: ``reach`` (its routes in rank order,
    each with its verdict) and, once asked, ``via`` (the net of each gateway -> the router
    hosts of the routes through it).  Senders with the same nets and the same routes to the
    net share one, unless a verdict names the sender (``personal``)."""

    __slots__ = ("clean", "personal", "reach", "via")

    def __init__(self, reach: Reach, personal: bool) -> None:
        self.reach = reach
        self.clean = not any(v.problems for v in reach.routes)  # no route has a problem
        self.personal = personal
        self.via: dict[str, frozenset[str]] | None = None


def _via(routes: tuple[RouteVerdict, ...]) -> dict[str, frozenset[str]]:
    """The net of each gateway of ``routes`` -> the router hosts of the routes through it."""
    nets: dict[str, set[str]] = {}
    for v in routes:
        routers = nets.setdefault(net_of(v.gateway), set())
        if v.router is not None:
            routers.add(v.router)
    return {net: frozenset(routers) for net, routers in nets.items()}


class Prover:
    """Judges routes and reachability over a ``World``, caching per endpoint and net."""

    #: share a ``Way`` between senders with the same nets and routes (off: each its own;
    #: the tests prove both give the same findings)
    share_ways = True

    def __init__(self, world: World) -> None:
        self.world = world
        #: endpoint -> net -> how it reaches the net (nets it has routes to)
        self._ways: dict[str, dict[str, Way]] = {}
        #: (sender nets, routes to one net) -> the way shared by such senders
        self._shared: dict[tuple[frozenset[str], tuple[Route, ...]], Way] = {}
        #: (net, DIRECT or NONE) -> the reach of a net without routes
        self._bare: dict[tuple[str, str], Reach] = {}
        self._any: dict[tuple[str, tuple[str, ...]], tuple[int, Reach | None]] = {}
        #: route -> (verdict for a sender on the gateway's net, the gateway's net)
        self._routes: dict[Route, tuple[RouteVerdict, str]] = {}

    def gateway_routers(self, ep: Endpoint, r: Reach) -> Mapping[str, frozenset[str]]:
        """For ``ep``'s reach ``r``: the net of each gateway of its routes -> the router
        hosts of the routes through a gateway on that net (cached)."""
        way = self.ways(ep).get(r.net)
        if way is None or way.reach is not r:
            return _via(r.routes)
        if way.via is None:
            way.via = _via(r.routes)
        return way.via

    def routers_via(self, ep: Endpoint, r: Reach, local_net: str) -> frozenset[str]:
        """Router hosts of the routes of ``ep``'s reach ``r`` whose gateway is on
        ``local_net`` (from ``gateway_routers``, cached)."""
        return self.gateway_routers(ep, r).get(local_net, frozenset())

    def _gateway_side(self, route: Route) -> tuple[RouteVerdict, str]:
        """The verdict on a route with a sender on the gateway's net (hop, gateway owner,
        forwarding, its NIs), and the gateway's net: cached, since every client of a tree
        repeats the same routes."""
        got = self._routes.get(route)
        if got is None:
            (net, gw), (hop, prio) = route
            got = (self._judge_gateway(net, gw, hop, prio), net_of(gw))
            self._routes[route] = got
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

    def ways(self, ep: Endpoint) -> dict[str, Way]:
        """net -> how ``ep`` reaches it, for each net ``ep`` has routes to (in net order)."""
        got = self._ways.get(ep.name)
        if got is None:
            by_net: dict[str, list[Route]] = {}
            table = ep.state.routes.routes if ep.state.routes is not None else {}
            for route in table.items():
                by_net.setdefault(route[0][0], []).append(route)
            rules = working(ep.state.udsp or ())  # a dead rule prefers nothing
            ruled = _ruled(rules)
            got = {}
            for net in sorted(by_net):
                routes = tuple(by_net[net])
                if net in ruled:  # the endpoint's own rules order them
                    got[net] = self._way(ep, net, routes, rules)
                    continue
                key = (ep.nets, routes)
                way = self._shared.get(key) if self.share_ways else None
                if way is None or way.personal:
                    way = self._way(ep, net, routes, ())
                    self._shared.setdefault(key, way)
                got[net] = way
            self._ways[ep.name] = got
        return got

    def _way(
        self, ep: Endpoint, net: str, routes: tuple[Route, ...], rules: tuple[Rule, ...]
    ) -> Way:
        """Judge ``ep``'s ``routes`` to ``net``; ``rules``: its UDSP rules when some are for
        ``net``."""
        verdicts, personal = [], False
        for route in routes:
            v, gw_net = self._gateway_side(route)
            if gw_net not in ep.nets:  # what is judged then names the sender
                have = ", ".join(sorted(ep.nets)) or "none"
                mine = (
                    "V-GW-NOT-ON-NET",
                    f"gateway {v.gateway} is on {gw_net}, not on a net of {ep.name} "
                    f"(its NIs: {have})",
                )
                v = dataclasses.replace(v, problems=(mine, *v.problems))
                personal = True
            verdicts.append(v)
        # gateways differ within a net: one order
        if rules:
            verdicts.sort(key=lambda r: (_rank(rules, net, r), r.gateway))
        else:
            verdicts.sort(key=_BY_PRIORITY)
        ranked = tuple(verdicts)
        return Way(Reach(net, self._status(ep, net, ranked, rules), ranked), personal)

    @staticmethod
    def _status(
        ep: Endpoint, net: str, routes: tuple[RouteVerdict, ...], rules: tuple[Rule, ...]
    ) -> str:
        """A pair holds when some route at the best priority present works; works only at
        a worse priority -> ``BACKUP`` (``routes`` in rank order, at least one)."""
        if net in ep.nets:
            return DIRECT
        works = None
        for r in routes:  # the first that works is the best that works
            if not r.problems:
                works = r
                break
        if works is None:
            return BROKEN
        if rules:
            same = _rank(rules, net, works) == _rank(rules, net, routes[0])
        else:
            same = works.priority == routes[0].priority
        return HOLD if same else BACKUP

    def verdicts(self, ep: Endpoint) -> dict[str, tuple[RouteVerdict, ...]]:
        """net -> the verdict on each of ``ep``'s routes to it, by (priority, gateway)."""
        return {net: way.reach.routes for net, way in self.ways(ep).items()}

    def reach(self, ep: Endpoint, net: str) -> Reach:
        """How ``ep`` reaches ``net``: a pair holds when some route at the best priority
        present works; works only at a worse priority -> ``BACKUP``."""
        way = self.ways(ep).get(net)
        if way is not None:
            return way.reach
        key = (net, DIRECT if net in ep.nets else NONE)
        got = self._bare.get(key)
        if got is None:
            got = self._bare[key] = Reach(*key)
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


def owned(ep: Endpoint, nids: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``nids`` of the host ``ep`` split into those on a net it has an NI on and the others.

    A NID is reachable only where a route leads to its net *and* its host has an NI there:
    a NID the manifest lists on a net the host's file (or live dump) has no NI on answers
    nothing, however good the routes to that net are, so no pair may count on it.  When the
    state does not show the NIs at all (a dump without its ``net:`` part), every NID is kept:
    nothing is known against it."""
    if ep.state.nets is None:
        return nids, ()
    nets = ep.nets
    if all(net_of(n) in nets for n in nids):
        return nids, ()
    return (
        tuple(n for n in nids if net_of(n) in nets),
        tuple(n for n in nids if net_of(n) not in nets),
    )
