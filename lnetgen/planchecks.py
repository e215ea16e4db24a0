"""What the values of a ``plan.json`` mean together, checked when ``lnetgen.planfile`` reads one
(after the schema, so every value has its type): a hand-edited plan that would crash a command
later, or be applied though it cannot mean what it says, is refused at the JSON path of the
value that breaks it.

A plan is as ``lnetgen solve`` writes it.  Every client class is on a *client net* (a network
of kind ``client``: one per net of the inventory's clients, so a plan has at least one).  Each
NI and NID is on the net it names; no NID is listed twice; a router's ``networks`` and ``nids``
restate its interfaces, and its NIs on one net are listed together (the Ansible variables
group them by net, keeping their order).  A server's net is a storage net, its server net (with
its NID there, or neither) a server net; a failover partner is another server.  A network
lists the servers on it, once each, and names routers with an NI on it.  A class names each
route set once, at most one per storage net, all for clients on its net.  A route goes from
clients to a storage net, or from servers to a client net, through a gateway on the host's own
net (LNet refuses a gateway on the target net itself, and cannot reach one elsewhere); routes
to one net are listed together, each gateway once (LNet keeps the first of two).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, UsageError, json_path
from lnetgen.inventory.messages import clip, show

JsonPath = tuple[str | int, ...]
Doc = dict[str, Any]
CLIENT, STORAGE, SERVER = "client", "storage", "server"


def error(path: str, code: str, where: str, message: str) -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", code, where, message)])


def bad(path: str, where: JsonPath, message: str) -> UsageError:
    return error(path, "E-PLAN", json_path(where), f"not a plan lnetgen wrote: {message}")


class _Nids:
    """The net of each NID (parsed once: a plan of format 1 repeats its gateways millions of
    times), and where each NID of a host was first listed."""

    def __init__(self) -> None:
        self.nets: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self.seen: dict[str, JsonPath] = {}

    def net(self, nid: str) -> str:
        got = self.nets.get(nid)
        if got is None:
            got = self.nets[nid] = str(nodes.parse_nid(nid).net)
        return got

    def key(self, nid: str) -> str:
        """``nid`` as libcfs prints it (``10.0.0.1@o2ib`` for ``10.0.0.1@o2ib0``)."""
        got = self.keys.get(nid)
        if got is None:
            got = self.keys[nid] = str(nodes.parse_nid(nid))
        return got

    def claim(self, path: str, nid: str, where: JsonPath) -> None:
        """``nid`` is listed here for the first time in the plan."""
        first = self.seen.setdefault(self.key(nid), where)
        if first != where:
            raise bad(path, where, f"NID {nid} is listed twice (also at {json_path(first)})")


def check_meaning(path: str, doc: Doc) -> None:
    """Raise ``UsageError`` (``E-PLAN``) at the first value of ``doc`` (a plan of either format
    that passed the schema) that breaks the rules in this module's description."""
    kinds = {n["name"]: n["kind"] for n in doc["networks"]}
    nids = _Nids()
    _check_classes(path, doc, kinds)
    _check_routers(path, doc, kinds, nids)
    _check_servers(path, doc, kinds, nids)
    _check_networks(path, doc, kinds)
    _check_route_tables(path, doc, kinds, nids)


def _not_a(kinds: dict[str, str], kind: str, net: str) -> str:
    """Why ``net`` is not a net of ``kind``, naming those the plan has."""
    names = [n for n, k in kinds.items() if k == kind]
    have = ", ".join(names) if names else f"networks has no net of kind {kind}"
    return f"{net} is not a {kind} net of the plan ({clip(have)})"


def _on_net(path: str, nids: _Nids, nid: str, net: str, where: JsonPath, what: str) -> None:
    if nids.net(nid) != net:
        raise bad(path, where, f"{nid} is not on {net}, the net of {what}")


def _grouped(path: str, nets: Iterable[str], where: JsonPath, key: str, what: str) -> None:
    """The entries of ``nets`` (one per item of the list at ``where``) list each net together."""
    done: set[str] = set()
    last = None
    for j, net in enumerate(nets):
        if net != last and net in done:
            raise bad(
                path,
                (*where, j, key),
                f"{net} again after {last}: {what} are listed together",
            )
        done.add(net)
        last = net


def _check_routers(path: str, doc: Doc, kinds: dict[str, str], nids: _Nids) -> None:
    """Each router's NIs are on nets of the plan, their NIDs on those nets and nowhere else in
    the plan, grouped by net; ``networks`` and ``nids`` restate them."""
    for i, r in enumerate(doc["routers"]):
        where: JsonPath = ("routers", i, "interfaces")
        for j, ni in enumerate(r["interfaces"]):
            if ni["net"] not in kinds:
                raise bad(path, (*where, j, "net"), f"{ni['net']} is not a net of the plan")
            _on_net(path, nids, ni["nid"], ni["net"], (*where, j, "nid"), "this interface")
            nids.claim(path, ni["nid"], (*where, j, "nid"))
        _grouped(
            path, (ni["net"] for ni in r["interfaces"]), where, "net", "a host's NIs on one net"
        )
        nets = list(dict.fromkeys(ni["net"] for ni in r["interfaces"]))
        if r["networks"] != nets:
            raise bad(
                path,
                ("routers", i, "networks"),
                f"{show(r['networks'])} are not the nets of its interfaces {show(nets)}",
            )
        if r["nids"] != [ni["nid"] for ni in r["interfaces"]]:
            raise bad(
                path, ("routers", i, "nids"), "not the NIDs of its interfaces, in their order"
            )


def _check_servers(path: str, doc: Doc, kinds: dict[str, str], nids: _Nids) -> None:
    """Each server's NIDs are on its storage net, its server net (both or neither) and its
    rails' nets, and nowhere else in the plan; a failover partner is another server."""
    names = {s["name"] for s in doc["servers"]}
    for i, s in enumerate(doc["servers"]):
        at: JsonPath = ("servers", i)
        net, snet, snid = s["net"], s.get("server_net", ""), s.get("server_nid", "")
        if kinds.get(net) != STORAGE:
            raise bad(path, (*at, "net"), f"{net} is not a storage net of the plan")
        _on_net(path, nids, s["nid"], net, (*at, "nid"), f"server {s['name']}")
        nids.claim(path, s["nid"], (*at, "nid"))
        if bool(snet) != bool(snid):
            raise bad(
                path,
                (*at, "server_nid" if snet else "server_net"),
                "server_net and server_nid are given together (the server's NID on its "
                "fabric's server net), or neither",
            )
        if snet:
            if kinds.get(snet) != SERVER:
                raise bad(path, (*at, "server_net"), f"{snet} is not a server net of the plan")
            _on_net(path, nids, snid, snet, (*at, "server_nid"), "its server_net")
            if snid.rpartition("@")[0] != s["nid"].rpartition("@")[0]:
                raise bad(path, (*at, "server_nid"), f"{snid} has another address than {s['nid']}")
            nids.claim(path, snid, (*at, "server_nid"))
        for k, rail in enumerate(s.get("rails", ())):
            if rail["net"] not in (net, snet):
                raise bad(
                    path, (*at, "rails", k, "net"), f"{rail['net']} is not a net of the server"
                )
            _on_net(path, nids, rail["nid"], rail["net"], (*at, "rails", k, "nid"), "this rail")
            nids.claim(path, rail["nid"], (*at, "rails", k, "nid"))
        partner = s.get("failover", "")
        if partner and (partner == s["name"] or partner not in names):
            what = "the server itself" if partner == s["name"] else "not a server of the plan"
            raise bad(path, (*at, "failover"), f"failover partner {partner} is {what}")


def _check_networks(path: str, doc: Doc, kinds: dict[str, str]) -> None:
    """A network lists exactly the servers on it (as their storage net or server net), once
    each, and names only routers with an NI on it (its primary routers among them)."""
    on: dict[str, set[str]] = {}
    for s in doc["servers"]:
        for net in (s["net"], s.get("server_net", "")):
            on.setdefault(net, set()).add(s["name"])
    router_nets = {r["name"]: {ni["net"] for ni in r["interfaces"]} for r in doc["routers"]}
    for i, n in enumerate(doc["networks"]):
        name = n["name"]
        have = on.get(name, set())
        for key, members in (("servers", have), ("routers", None), ("primary_routers", None)):
            seen: set[str] = set()
            for j, host in enumerate(n[key]):
                where: JsonPath = ("networks", i, key, j)
                if host in seen:
                    raise bad(path, where, f"{host} is listed twice")
                seen.add(host)
                if members is not None and host not in members:
                    raise bad(path, where, f"{host} is not a server on {name}")
                if members is None and name not in router_nets.get(host, ()):
                    raise bad(path, where, f"{host} is not a router with an NI on {name}")
                if key == "primary_routers" and host not in n["routers"]:
                    raise bad(path, where, f"{host} is not among the routers of {name}")
            if members is not None and seen != members:
                missing = nodes.fold(sorted(members - seen))
                raise bad(path, ("networks", i, key), f"{clip(missing)} on {name} not listed")


def _check_classes(path: str, doc: Doc, kinds: dict[str, str]) -> None:
    """Every class is on a client net; in format 2 it names each route set of the plan once,
    at most one per storage net, each for clients on its net."""
    for i, c in enumerate(doc["client_classes"]):
        if kinds.get(c["net"]) != CLIENT:
            raise bad(
                path,
                ("client_classes", i, "net"),
                _not_a(kinds, CLIENT, c["net"]),
            )
    sets = doc.get("route_sets")
    if sets is None:  # format 1
        return
    for k, rs in enumerate(sets):
        if kinds.get(rs["client_net"]) != CLIENT:
            raise bad(
                path,
                ("route_sets", k, "client_net"),
                _not_a(kinds, CLIENT, rs["client_net"]),
            )
    set_net = [rs["net"] for rs in sets]
    set_cnet = [rs["client_net"] for rs in sets]
    for i, c in enumerate(doc["client_classes"]):
        idx = c["route_sets"]
        # the common case at a glance: Spider's nearest-neighbor plan names 562,155 route sets
        if (
            max(idx, default=-1) < len(sets)
            and len({set_net[k] for k in idx}) == len(idx)
            and all(set_cnet[k] == c["net"] for k in idx)
        ):
            continue
        _locate_class_sets(path, i, c, set_net, set_cnet)


def _locate_class_sets(path: str, i: int, c: Doc, set_net: list[str], set_cnet: list[str]) -> None:
    first: dict[str, int] = {}
    for j, k in enumerate(c["route_sets"]):
        where: JsonPath = ("client_classes", i, "route_sets", j)
        if k >= len(set_net):
            raise bad(path, where, f"route set {k}, but the plan has {len(set_net)}")
        if set_cnet[k] != c["net"]:
            raise bad(
                path,
                where,
                f"route set {k} is for clients on {set_cnet[k]}; this class is on {c['net']}",
            )
        j0 = first.setdefault(set_net[k], j)
        if j0 != j:
            k0 = c["route_sets"][j0]
            what = "is listed twice" if k0 == k else f"goes to {set_net[k]}, as route set {k0} does"
            raise bad(
                path,
                where,
                f"route set {k} {what} (route_sets[{j0}] of this class): a class has one route "
                "set per storage net",
            )


def _check_route_tables(path: str, doc: Doc, kinds: dict[str, str], nids: _Nids) -> None:
    """Clients route to storage nets through gateways on their own net; servers route to
    client nets through gateways on their storage net."""
    tables: list[tuple[JsonPath, list[Doc], str, str, str]] = []
    for k, rs in enumerate(doc.get("route_sets", ())):
        if not rs["routes"]:
            raise bad(path, ("route_sets", k, "routes"), "a route set has at least one route")
        for j, r in enumerate(rs["routes"]):
            if r["net"] != rs["net"]:
                raise bad(
                    path,
                    ("route_sets", k, "routes", j, "net"),
                    f"{r['net']}: every route of a set goes to its net {rs['net']}",
                )
        tables.append((("route_sets", k), rs["routes"], rs["client_net"], STORAGE, "its clients"))
    for i, c in enumerate(doc["client_classes"]):
        if "routes" in c:  # format 1
            tables.append((("client_classes", i), c["routes"], c["net"], STORAGE, "the class"))
    for i, sr in enumerate(doc["server_routes"]):
        tables.append((("server_routes", i), sr["routes"], sr["net"], CLIENT, "its servers"))
    for at, routes, own, to, who in tables:
        first: dict[tuple[str, str], int] = {}
        for j, r in enumerate(routes):
            where: JsonPath = (*at, "routes", j)
            net, gateway = r["net"], r["gateway"]
            if kinds.get(net) != to:
                raise bad(path, (*where, "net"), _not_a(kinds, to, net))
            if nids.net(gateway) == net:
                raise bad(
                    path, (*where, "gateway"), f"{gateway} is on {net} itself, the net it routes to"
                )
            _on_net(path, nids, gateway, own, (*where, "gateway"), who)
            j0 = first.setdefault((net, nids.key(gateway)), j)
            if j0 != j:
                raise bad(
                    path,
                    (*where, "gateway"),
                    f"the route to {net} through {gateway} is listed twice (also routes[{j0}])",
                )
        _grouped(path, (r["net"] for r in routes), (*at, "routes"), "net", "routes to one net")
