"""The solved plan: what every emitter renders, what diff compares and analysis reads.

A ``Plan`` is immutable and serializes to ``plan.json`` (documented by
``schemas/plan.schema.json``), its client route tables folded into route sets
(:func:`fold_route_sets`).  ``lnetgen.guarantees.check_guarantees`` proves the
fine-grained-routing guarantees on a plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lnetgen import nodes
from lnetgen.hostplan import Interface as Interface
from lnetgen.hostplan import RouterPlan as RouterPlan
from lnetgen.hostplan import ServerPlan as ServerPlan

#: Net kinds in ``Network.kind``: a client net, a storage net (clients reach it through routers),
#: and the server net of a storage fabric (servers only; no router, no client, no route).
CLIENT, STORAGE, SERVER = "client", "storage", "server"
#: ``Route.why``: a primary gateway, an alternate router of the same leaf set, or a router of
#: the backup group.  The network's own ``why`` says which group or set it is.
WHY_PRIMARY, WHY_ALTERNATE, WHY_BACKUP = "primary", "alternate", "backup"
#: ``format_version`` of plan.json: raised when a reader of the previous version would
#: misread the new one.  Version 2 folds the client route tables (``route_sets``); version 1
#: listed every class's whole table and is still read (``lnetgen.planfile``).
PLAN_FORMAT_VERSION = 2
READABLE_PLAN_VERSIONS = (1, 2)


@dataclass(frozen=True, order=True)
class Route:
    """One route entry: to ``net`` through the single gateway NID ``gateway``."""

    net: str
    gateway: str
    hop: int = 1
    priority: int = 0
    why: str = field(default="", compare=False)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "net": self.net,
            "gateway": self.gateway,
            "hop": self.hop,
            "priority": self.priority,
        }
        if self.why:
            d["why"] = self.why
        return d


@dataclass(frozen=True)
class Network:
    name: str
    kind: str  # client | storage
    servers: tuple[str, ...] = ()
    routers: tuple[str, ...] = ()  # routers with an interface on this net (primary + backup)
    primary_routers: tuple[str, ...] = ()  # gateways used at priority 0
    leaf: str = ""  # switch/leaf label of the servers (storage nets)
    fs: str = ""
    group: str = ""
    why: str = ""  # how the strategy designed this net (group, pairing, backup)


@dataclass(frozen=True)
class ClientClass:
    name: str
    net: str  # the client net its members are on
    interface: str
    members: str  # folded node set
    count: int
    routes: tuple[Route, ...]
    #: the table's runs of routes to one net, when whoever built the class knows them (the
    #: solver, a format 2 plan): shared tuples, so folding finds equal runs by identity
    runs: tuple[tuple[Route, ...], ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class RouteSet:
    """The routes of clients on ``client_net`` to one storage net ``net``, and the classes
    whose clients use exactly these (``users``; ``count`` clients; their node set is
    ``Plan.route_set_members``).

    A class's table is its route sets, one per net, in net order: nearest-neighbor gives Spider
    16,873 classes of 192 routes, but only 32 nets x 6 choices of primary gateway, so
    ``plan.json`` and ``routes/clients.csv`` list the 192 route sets once each, and the
    per-host emitters render each set once and reuse the text."""

    client_net: str
    net: str
    routes: tuple[Route, ...]
    users: tuple[int, ...]  # the classes (indices into client_classes) that hold it
    count: int  # clients in those classes


@dataclass(frozen=True)
class ServerRoutes:
    servers: str  # folded node set
    net: str  # the storage net these servers are on
    routes: tuple[Route, ...]


@dataclass(frozen=True)
class Plan:
    site: str
    strategy: str
    lnetgen_version: str
    inventory_digest: str
    networks: tuple[Network, ...]
    routers: tuple[RouterPlan, ...]
    servers: tuple[ServerPlan, ...]
    client_classes: tuple[ClientClass, ...]
    server_routes: tuple[ServerRoutes, ...]
    stats: dict[str, Any] = field(default_factory=dict, compare=False)

    # ------------------------------------------------------------------ lookups
    def network(self, name: str) -> Network:
        for n in self.networks:
            if n.name == name:
                return n
        raise KeyError(name)

    def storage_nets(self) -> list[Network]:
        return [n for n in self.networks if n.kind == STORAGE]

    def client_nets(self) -> list[Network]:
        return [n for n in self.networks if n.kind == CLIENT]

    def server_nets(self) -> list[Network]:
        return [n for n in self.networks if n.kind == SERVER]

    def router_by_nid(self) -> dict[str, RouterPlan]:
        return {i.nid: r for r in self.routers for i in r.interfaces}

    @cached_property
    def route_sets(self) -> tuple[tuple[RouteSet, ...], tuple[tuple[int, ...], ...]]:
        """The client route tables folded: every distinct (client net, storage net, routes)
        once, and for each class (in ``client_classes`` order) the indices of its sets in
        the order its table lists them.  See :class:`RouteSet` and :func:`fold_route_sets`."""
        return fold_route_sets(self.client_classes)

    @cached_property
    def route_set_members(self) -> tuple[str, ...]:
        """The folded node set of each route set's clients (``route_sets`` order), for
        ``plan.json`` and ``routes/clients.csv``; sets held by the same classes share one."""
        classes = self.client_classes
        folded: dict[tuple[int, ...], str] = {}
        names: dict[int, list[str]] = {}  # each class expanded once, not once per set

        def members(ci: int) -> list[str]:
            got = names.get(ci)
            if got is None:
                got = names[ci] = nodes.expand(classes[ci].members)
            return got

        out = []
        for rs in self.route_sets[0]:
            text = folded.get(rs.users)
            if text is None:
                if len(rs.users) == 1:
                    text = classes[rs.users[0]].members
                else:
                    text = nodes.fold(n for ci in rs.users for n in members(ci))
                folded[rs.users] = text
            out.append(text)
        return tuple(out)

    def routes_for_server(self) -> dict[str, tuple[Route, ...]]:
        out: dict[str, tuple[Route, ...]] = {}
        for sr in self.server_routes:
            for name in nodes.expand(sr.servers):
                out[name] = sr.routes
        return out

    # ------------------------------------------------------------------ JSON
    def to_dict(self, routes: bool = True) -> dict[str, Any]:
        """Plain data (``plan.json``, format 2); ``routes=False`` leaves the route lists out
        (see ``to_json``).  Client route tables are folded (:attr:`route_sets`): a class lists
        the indices of its route sets, each set its routes once."""
        sets, class_sets = self.route_sets
        return {
            "format_version": PLAN_FORMAT_VERSION,
            "site": self.site,
            "strategy": self.strategy,
            "lnetgen_version": self.lnetgen_version,
            "inventory_digest": self.inventory_digest,
            "networks": [
                {
                    "name": n.name,
                    "kind": n.kind,
                    "servers": list(n.servers),
                    "routers": list(n.routers),
                    "primary_routers": list(n.primary_routers),
                    "leaf": n.leaf,
                    "fs": n.fs,
                    "group": n.group,
                    "why": n.why,
                }
                for n in self.networks
            ],
            "routers": [
                {
                    "name": r.name,
                    "leaf": r.leaf,
                    "coords": list(r.coords) if r.coords is not None else None,
                    "networks": list(r.networks),
                    "nids": [i.nid for i in r.interfaces],
                    "interfaces": [
                        {"net": i.net, "nid": i.nid, "interface": i.interface} for i in r.interfaces
                    ],
                }
                for r in self.routers
            ],
            "servers": [
                {
                    "name": s.name,
                    "role": s.role,
                    "fs": s.fs,
                    "nid": s.nid,
                    "net": s.net,
                    "interface": s.interface,
                    "leaf": s.leaf,
                    "server_net": s.server_net,
                    "server_nid": s.server_nid,
                    "failover": s.failover,
                    **(
                        {
                            "rails": [
                                {"net": i.net, "nid": i.nid, "interface": i.interface}
                                for i in s.rails
                            ]
                        }
                        if s.rails
                        else {}
                    ),
                }
                for s in self.servers
            ],
            "client_classes": [
                {
                    "name": c.name,
                    "net": c.net,
                    "interface": c.interface,
                    "members": c.members,
                    "count": c.count,
                    "route_sets": list(idx),
                }
                for c, idx in zip(self.client_classes, class_sets, strict=True)
            ],
            "route_sets": [
                {
                    "client_net": rs.client_net,
                    "net": rs.net,
                    "members": members,
                    "count": rs.count,
                    **({"routes": [r.as_dict() for r in rs.routes]} if routes else {}),
                }
                for rs, members in zip(sets, self.route_set_members, strict=True)
            ],
            "server_routes": [
                {
                    "servers": s.servers,
                    "net": s.net,
                    **({"routes": [r.as_dict() for r in s.routes]} if routes else {}),
                }
                for s in self.server_routes
            ],
            "stats": self.stats,
        }

    def to_json(self) -> str:
        """``plan.json``: sorted keys, one route per line.

        Route lists are written piece by piece, each route's JSON made once (route tables
        share their ``Route`` objects); client classes one per line (a nearest-neighbor plan
        for Spider has 16,873 of them, each naming its 32 route sets).
        """
        cache: dict[int, str] = {}

        def route(r: Route) -> str:
            text = cache.get(id(r))
            if text is None:
                text = cache[id(r)] = json.dumps(r.as_dict(), sort_keys=True)
            return text

        def table(head: dict[str, Any], routes: tuple[Route, ...]) -> str:
            fields = json.dumps(head, sort_keys=True)[1:-1]
            if not routes:
                return "  {" + fields + ', "routes": []}'
            body = ",\n".join("   " + route(r) for r in routes)
            return "  {" + fields + ', "routes": [\n' + body + "\n  ]}"

        whole = self.to_dict(routes=False)
        parts = []
        for key in sorted(whole):
            if key == "client_classes":
                items = ["  " + json.dumps(c, sort_keys=True) for c in whole[key]]
            elif key == "route_sets":
                items = [
                    table(c, rs.routes)
                    for c, rs in zip(whole[key], self.route_sets[0], strict=True)
                ]
            elif key == "server_routes":
                items = [
                    table({k: v for k, v in c.items() if k != "routes"}, sr.routes)
                    for c, sr in zip(whole[key], self.server_routes, strict=True)
                ]
            else:
                text = json.dumps(whole[key], indent=1, sort_keys=True).replace("\n", "\n ")
                parts.append(f" {json.dumps(key)}: {text}")
                continue
            inner = ",\n".join(items)
            parts.append(f" {json.dumps(key)}: [\n{inner}\n ]" if items else f' "{key}": []')
        return "{\n" + ",\n".join(parts) + "\n}\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        def routes(items: list[dict[str, Any]]) -> tuple[Route, ...]:
            return tuple(
                Route(
                    r["net"], r["gateway"], r.get("hop", -1), r.get("priority", 0), r.get("why", "")
                )
                for r in items
            )

        return cls(
            site=d["site"],
            strategy=d["strategy"],
            lnetgen_version=d["lnetgen_version"],
            inventory_digest=d["inventory_digest"],
            networks=tuple(
                Network(
                    n["name"],
                    n["kind"],
                    tuple(n["servers"]),
                    tuple(n["routers"]),
                    tuple(n.get("primary_routers", ())),
                    n.get("leaf", ""),
                    n.get("fs", ""),
                    n.get("group", ""),
                    n.get("why", ""),
                )
                for n in d["networks"]
            ),
            routers=tuple(
                RouterPlan(
                    r["name"],
                    r["leaf"],
                    tuple(r["coords"]) if r.get("coords") else None,
                    tuple(Interface(i["net"], i["nid"], i["interface"]) for i in r["interfaces"]),
                )
                for r in d["routers"]
            ),
            servers=tuple(
                ServerPlan(
                    s["name"],
                    s["role"],
                    s["fs"],
                    s["nid"],
                    s["net"],
                    s["interface"],
                    s["leaf"],
                    s.get("server_net", ""),
                    s.get("server_nid", ""),
                    s.get("failover", ""),
                    tuple(
                        Interface(i["net"], i["nid"], i["interface"]) for i in s.get("rails", ())
                    ),
                )
                for s in d["servers"]
            ),
            client_classes=_classes(d, routes),
            server_routes=tuple(
                ServerRoutes(s["servers"], s["net"], routes(s["routes"]))
                for s in d["server_routes"]
            ),
            stats=d.get("stats", {}),
        )

    @classmethod
    def from_json(cls, text: str) -> Plan:
        return cls.from_dict(json.loads(text))


def _classes(
    d: dict[str, Any], routes: Callable[[list[dict[str, Any]]], tuple[Route, ...]]
) -> tuple[ClientClass, ...]:
    """Client classes of a plan document: format 1 lists each class's routes, format 2 the
    indices of its route sets (whose ``Route`` objects the classes then share)."""
    sets = [routes(rs["routes"]) for rs in d.get("route_sets", ())]
    for i, (rs, run) in enumerate(zip(d.get("route_sets", ()), sets, strict=True)):
        if not run or any(r.net != rs["net"] for r in run):
            raise ValueError(f"route_sets[{i}]: every route of a set goes to its net {rs['net']}")
    out = []
    for c in d["client_classes"]:
        runs: tuple[tuple[Route, ...], ...] = ()
        if "route_sets" in c:
            runs = tuple(sets[i] for i in c["route_sets"])
            table = tuple(r for run in runs for r in run)
        else:
            table = routes(c["routes"])
        out.append(
            ClientClass(c["name"], c["net"], c["interface"], c["members"], c["count"], table, runs)
        )
    return tuple(out)


# ---------------------------------------------------------------------- folding


def _set_order(rs: RouteSet) -> tuple[object, ...]:
    parsed = nodes.parse_net(rs.net)
    return (
        rs.client_net,
        parsed.lnd,
        parsed.number,
        rs.net,
        tuple((r.priority, r.gateway, r.hop, r.why) for r in rs.routes),
    )


def _runs_of(cc: ClientClass) -> tuple[Sequence[tuple[Route, ...]], bool]:
    """The class's runs of routes to one net, and whether they are the class's own tuples
    (``runs``, used when they add up to its table; then a run's identity names it) rather
    than slices made here.  Whoever sets ``runs`` makes each one net's routes: the solver by
    construction, the plan reader by checking every route set."""
    if cc.runs and sum(map(len, cc.runs)) == len(cc.routes):
        return cc.runs, True
    table = cc.routes
    out = []
    start, n = 0, len(table)
    while start < n:
        net = table[start].net
        end = start + 1
        while end < n and table[end].net == net:
            end += 1
        out.append(table[start:end])
        start = end
    return out, False


def fold_route_sets(
    classes: Sequence[ClientClass],
) -> tuple[tuple[RouteSet, ...], tuple[tuple[int, ...], ...]]:
    """Split every class's table into its runs of routes to one net and keep each distinct run
    once (per client net): ``(sets, per-class indices)``; the sets are sorted by client net,
    net and routes, and ``sets[i].routes`` for ``i`` in a class's indices, concatenated, is
    that class's table.  Runs shared as objects (the solver reuses them) are recognised by
    identity first, so folding 3.2 million routes costs one pass."""
    by_ids: dict[tuple[object, ...], int] = {}
    by_value: dict[tuple[object, ...], int] = {}
    runs: list[tuple[str, tuple[Route, ...]]] = []
    users: list[list[int]] = []
    per_class: list[list[int]] = []
    for ci, cc in enumerate(classes):
        idx: list[int] = []
        runs_here, own = _runs_of(cc)
        for run in runs_here:
            # a slice made here dies with the loop: only the class's own tuples keep their id
            key = (cc.net, id(run)) if own else (cc.net, *map(id, run))
            k = by_ids.get(key)
            if k is None:
                value = (cc.net, *((r.net, r.gateway, r.hop, r.priority, r.why) for r in run))
                k = by_value.get(value)
                if k is None:
                    k = by_value[value] = len(runs)
                    runs.append((cc.net, run))
                    users.append([])
                by_ids[key] = k
            users[k].append(ci)
            idx.append(k)
        per_class.append(idx)
    sets = [
        RouteSet(cnet, run[0].net, run, tuple(who), sum(classes[ci].count for ci in who))
        for (cnet, run), who in zip(runs, users, strict=True)
    ]
    order = sorted(range(len(sets)), key=lambda k: _set_order(sets[k]))
    new_index = {old: new for new, old in enumerate(order)}
    return (
        tuple(sets[k] for k in order),
        tuple(tuple(new_index[k] for k in idx) for idx in per_class),
    )
