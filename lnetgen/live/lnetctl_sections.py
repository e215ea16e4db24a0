"""The sections of lnetctl YAML, each normalized on its own: ``net:`` to a ``NetTable``,
``route:`` to a ``RouteTable``, ``routing:`` to a ``Routing``, ``peer:`` to the NID groups of
each peer, ``buffers:`` and ``global:`` to tunables (with the NIs' ``tunables:``), ``udsp:`` to
its rules.
``LNET_SECTIONS`` names every top-level section lnetctl is known to print."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lnetgen import nodes
from lnetgen.diagnostics import json_path
from lnetgen.live.block_yaml import Map
from lnetgen.live.errors import EntryError
from lnetgen.live.normalize import (
    LOOPBACK,
    RouteRows,
    canonical_nid,
    check_hop_priority,
    expand,
    integer,
    route_net,
)
from lnetgen.live.state import UNDEFINED_HOP, NetTable, RouteTable
from lnetgen.tunables import from_ni, from_yaml, is_int
from lnetgen.udsp import Rule


def _items(value: Any, section: str, line: int, at: tuple[str | int, ...] = ()) -> list[Map]:
    """The entries of the sequence ``value`` (``section:`` at ``at``, by default the
    top-level section of that name), each a mapping."""
    where = at or (section,)
    if value is None:
        return []
    if not isinstance(value, list):
        raise EntryError(
            line, f"'{section}:' should be a sequence of entries", path=json_path(where)
        )
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Map):
            raise EntryError(
                getattr(item, "line", line),
                f"'{section}:' entries should be mappings, got {item!r}",
                path=json_path((*where, i)),
            )
        out.append(item)
    return out


def _ints(values: Map, at: tuple[str | int, ...], line: int) -> Map:
    """``values`` (tunables), refused at the first value ``lnetgen.tunables`` would take for
    an integer that is not one (``int`` raised on 5,000 digits, or read fullwidth ones)."""
    for key, value in values.items():
        if is_int(value):
            try:
                integer(value, values.lines.get(key, line), key)
            except EntryError as exc:
                raise exc.under(json_path((*at, key))) from None
    return values


def _interfaces(value: Any, line: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (0, int(k)) if str(k).isdigit() else (1, str(k)))
        vals = [value[k] for k in keys]
    elif isinstance(value, list):
        vals = list(value)
    else:
        vals = [value]
    out = []
    for v in vals:
        if not isinstance(v, str) or not v:
            raise EntryError(line, f"bad interface {v!r}")
        out.append(v)
    return out


def _norm_net(
    i: int,
    item: Map,
    nets: dict[str, set[str]],
    nids: dict[str, list[str]],
    health: list[str],
    tunables: dict[str, int],
) -> str:
    """One entry of ``net:`` into the tables; its canonical net ('' for the loopback)."""
    iline = item.line
    ntype = item.get("net type")
    if not isinstance(ntype, str):
        raise EntryError(iline, "net entry without 'net type'")
    if LOOPBACK.fullmatch(ntype.strip()):
        return ""
    try:
        net = nodes.canonical_net(ntype)
    except nodes.NodeSyntaxError as exc:
        where = json_path(("net", i, "net type"))
        raise EntryError(item.lines.get("net type", iline), str(exc), path=where) from None
    ifaces = nets.setdefault(net, set())
    ifaces.update(_interfaces(item.get("interfaces"), item.lines.get("interfaces", iline)))
    nis = _items(
        item.get("local NI(s)"),
        "local NI(s)",
        item.lines.get("local NI(s)", iline),
        ("net", i, "local NI(s)"),
    )
    for k, ni in enumerate(nis):
        at = ("local NI(s)", k)
        try:
            _norm_ni(i, at, net, ni, ifaces, nids, health, tunables)
        except EntryError as exc:
            raise exc.under(json_path(("net", i, *at))) from None
    return net


def _norm_ni(
    i: int,
    at: tuple[str, int],
    net: str,
    ni: Map,
    ifaces: set[str],
    nids: dict[str, list[str]],
    health: list[str],
    tunables: dict[str, int],
) -> None:
    """One NI (``local NI(s)[k]``) of the ``net:`` entry ``i`` into the tables."""
    ifaces.update(_interfaces(ni.get("interfaces"), ni.lines.get("interfaces", ni.line)))
    tun = ni.get("tunables")
    if isinstance(tun, Map):
        ints = _ints(tun, ("net", i, *at, "tunables"), ni.line)
        for key, value in from_ni(nodes.parse_net(net).lnd, ints).items():
            tunables.setdefault(key, value)
    nid = ni.get("nid")
    if isinstance(nid, str):
        canon = canonical_nid(nid, ni.lines.get("nid", ni.line), "NID")
        nids.setdefault(net, []).append(canon)
        status = ni.get("status")
        if isinstance(status, str) and status.lower() == "down":
            health.append(f"NI {canon} is down")


def norm_nets(value: Any, line: int) -> NetTable:
    """``net:``: interfaces and NIDs per net (the loopback net left out); a NI shown down is
    a health note."""
    nets: dict[str, set[str]] = {}
    nids: dict[str, list[str]] = {}
    health: list[str] = []
    tunables: dict[str, int] = {}
    for i, item in enumerate(_items(value, "net", line)):
        try:
            _norm_net(i, item, nets, nids, health, tunables)
        except EntryError as exc:
            raise exc.under(json_path(("net", i))) from None
    return NetTable(
        {n: tuple(sorted(i)) for n, i in nets.items()},
        {n: tuple(v) for n, v in nids.items()},
        tuple(health),
        tunables,
    )


def norm_buffers(value: Any, line: int) -> dict[str, int]:
    """``buffers:`` (router buffer counts) as tunables."""
    if value is None:
        return {}
    if not isinstance(value, Map):
        raise EntryError(line, "'buffers:' should be a mapping")
    return from_yaml("buffers", _ints(value, ("buffers",), line))


@dataclass(frozen=True)
class Globals:
    """``global:`` as tunables (the keys lnetgen writes); ``full`` when it lists every global
    setting as ``lnetctl export`` does (``numa_range`` first), not only chosen ones."""

    values: dict[str, int]
    full: bool


def norm_global(value: Any, line: int) -> Globals:
    """``global:``: the tunables lnetgen compares, and whether the kernel printed it."""
    if value is None:
        return Globals({}, False)
    if not isinstance(value, Map):
        raise EntryError(line, "'global:' should be a mapping")
    return Globals(from_yaml("global", _ints(value, ("global",), line)), "numa_range" in value)


def norm_routes(value: Any, line: int) -> RouteTable:
    """``route:``: one route per (net, gateway) after expanding ranges; ``detailed`` unless no
    entry shows a hop or a priority (``lnetctl route show`` without ``-v``)."""
    rows = RouteRows()
    entries = _items(value, "route", line)
    detailed = not entries or any("hop" in e or "priority" in e for e in entries)
    for i, e in enumerate(entries):
        try:
            _norm_route(i, e, rows)
        except EntryError as exc:
            raise exc.under(json_path(("route", i))) from None
    return rows.table(detailed, any("state" in e or "type" in e for e in entries))


def _norm_route(i: int, e: Map, rows: RouteRows) -> None:
    """Entry ``i`` of ``route:`` into ``rows``."""
    lines = e.lines
    net, gw = e.get("net"), e.get("gateway")
    if not isinstance(net, str) or not isinstance(gw, str):
        missing = "gateway" if isinstance(net, str) else "net"
        raise EntryError(e.line, f"route entry without '{missing}'")
    key = "hop"
    try:
        hop_line = lines.get("hop", e.line)
        hop = integer(e["hop"], hop_line, "hop") if e.get("hop") is not None else UNDEFINED_HOP
        check_hop_priority(hop, 0, hop_line, hop_line)
        key = "priority"
        prio_line = lines.get("priority", e.line)
        prio = integer(e["priority"], prio_line, key) if e.get(key) is not None else 0
        check_hop_priority(UNDEFINED_HOP, prio, prio_line, prio_line)
        key = "net"
        targets = [route_net(n, lines["net"]) for n in expand(net, lines["net"])]
        key = "gateway"
        gws = [canonical_nid(g, lines[key], key) for g in expand(gw, lines[key])]
    except EntryError as exc:
        raise exc.under(json_path(("route", i, key))) from None
    is_down = str(e.get("state", "")).lower() == "down"
    for n in targets:
        for g in gws:
            if rows.add(n, g, hop, prio) and is_down:
                rows.mark_down(g, n)


@dataclass(frozen=True)
class Routing:
    """``routing:``: whether the node forwards (``None`` when no ``enable`` is shown), and
    whether the section is the per-CPT sequence a full ``lnetctl export`` prints."""

    enabled: bool | None
    sequence: bool
    health: tuple[str, ...] = ()


def norm_routing(value: Any, line: int) -> Routing:
    """``routing:`` as a mapping (``enable: 1``) or a sequence (``- enable: 1``)."""
    enable: Any = None
    eline = line
    sequence = isinstance(value, list)
    at: tuple[str | int, ...] = ("routing", "enable")
    if isinstance(value, Map):
        enable, eline = value.get("enable"), value.lines.get("enable", line)
    elif isinstance(value, list):
        for k, item in enumerate(value):
            if isinstance(item, Map) and "enable" in item:
                enable, eline = item["enable"], item.lines["enable"]
                at = ("routing", k, "enable")
    elif value is not None:
        raise EntryError(line, "'routing:' should be a mapping or a sequence")
    if enable is None:
        return Routing(None, sequence, ("routing section without 'enable'",))
    text = str(enable).strip().lower()
    if text in ("true", "yes", "on"):
        return Routing(True, sequence)
    if text in ("false", "no", "off"):
        return Routing(False, sequence)
    try:
        return Routing(integer(enable, eline, "routing enable") != 0, sequence)
    except EntryError as exc:
        raise exc.under(json_path(at)) from None


def norm_peers(value: Any, line: int) -> dict[str, frozenset[str]]:
    """``peer:``: each NID of a peer mapped to all of that peer's NIDs."""
    out: dict[str, frozenset[str]] = {}
    for item in _items(value, "peer", line):
        found: list[str] = []
        primary = item.get("primary nid")
        if isinstance(primary, str):
            found.append(primary)
        for ni in _items(item.get("peer ni"), "peer ni", item.lines.get("peer ni", item.line)):
            nid = ni.get("nid")
            if isinstance(nid, str):
                found.append(nid)
        canon = set()
        for nid in found:
            try:
                canon.add(str(nodes.parse_nid(nid.strip())))
            except nodes.NodeSyntaxError:
                continue  # peers can list NIDs lnetgen does not model; they only help matching
        group = frozenset(canon)
        for nid in group:
            out[nid] = group
    return out


def norm_udsp(value: Any, line: int) -> tuple[Rule, ...]:
    """``udsp:``: the rules in ``idx`` order (lnetgen.udsp).  A rule without ``action`` has the
    preferred-list action (``lnetctl udsp show`` prints only a priority action): a working
    router rule when it has ``dst`` and ``rte``; with ``action: {priority: N}`` it is dead."""
    rules: list[tuple[int, Rule]] = []
    for k, item in enumerate(_items(value, "udsp", line)):
        where = item.line
        idx = item.get("idx", k)
        action = item.get("action")
        prio = action.get("priority") if isinstance(action, Map) else None
        try:
            pos = integer(idx, where, "idx")
            priority = None if prio is None else integer(prio, where, "priority")
        except EntryError:
            raise EntryError(
                where,
                f"udsp rule: idx and priority must be integers, not {idx!r}, {prio!r}",
                path=json_path(("udsp", k)),
            ) from None
        fields = {k2: str(item.get(k2, "") or "") for k2 in ("src", "dst", "rte")}
        rule = Rule(fields["dst"], fields["rte"], priority, fields["src"], where)
        rules.append((pos, rule))
    return tuple(r for _, r in sorted(rules, key=lambda t: t[0]))


#: The sections lnetgen reads, and the normalizer of each.
NORMALIZERS: dict[str, Callable[[Any, int], Any]] = {
    "net": norm_nets,
    "route": norm_routes,
    "routing": norm_routing,
    "peer": norm_peers,
    "buffers": norm_buffers,
    "global": norm_global,
    "udsp": norm_udsp,
}
LNET_SECTIONS = frozenset(
    (
        "net",
        "route",
        "routing",
        "peer",
        "buffers",
        "global",
        "numa",
        "discovery",
        "udsp",
        "ip2nets",
        "statistics",
        "ping",
        "max_intf",
        "drop_asym_route",
        "retry_count",
        "transaction_timeout",
        "health_sensitivity",
        "recovery_interval",
        "router_sensitivity",
        "lnd_timeout",
        "response_tracking",
        "recovery_limit",
        "max_recovery_ping_interval",
    )
)
