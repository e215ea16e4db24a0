"""The ``clients`` section: groups of compute nodes, each on one client net.

Reads ``clients[]`` (``name``, ``nodes`` as a node set, ``net``, ``interface`` (default: the
net's interface in ``client_nets``), ``nid`` rule, ``guid_base``).
Reports E-NODESET, E-NAME (unsafe host names), E-CLIENT-NET (a net not in client_nets),
E-NID-RULE and E-NID (addresses that cannot be derived), E-GUID (guid_base), E-DUP-NAME for a
group name used twice; claims every client's name and NID for the site-wide duplicate checks.
Gives the names, NIDs, nets and GUIDs of ``Site.clients``; where they sit comes from the topology.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lnetgen import nodes
from lnetgen.inventory.context import Context, Registry
from lnetgen.inventory.guids import GuidRange
from lnetgen.inventory.lnet import MAX_NUMERIC_ADDR, oversized, read_net
from lnetgen.inventory.messages import MAX_SHOWN, clip, show
from lnetgen.inventory.nets import ClientNets
from lnetgen.yamlsrc import Path

#: Most clients one inventory may describe (the largest machines have ~10^5 nodes); a node set
#: such as ``n[1-999999999]`` is refused before it is expanded.
MAX_CLIENTS = 1_000_000
MAX_GUID = 0xFFFF_FFFF_FFFF_FFFF


@dataclass
class ClientGroups:
    """All clients of the groups that check out, in inventory order (groups concatenated)."""

    names: list[str] = field(default_factory=list)
    nids: list[str] = field(default_factory=list)
    net_index: list[int] = field(default_factory=list)  # into client_nets
    iface_index: list[int] = field(default_factory=list)  # into iface_names
    iface_names: list[str] = field(default_factory=list)
    guids: list[str] = field(default_factory=list)
    groups: list[tuple[str, int, int]] = field(default_factory=list)  # name, start, stop
    guid_ranges: list[GuidRange] = field(default_factory=list)
    per_net: Counter[nodes.Net] = field(default_factory=Counter)
    #: every group checked out and no host is listed twice: the clients can be placed
    complete: bool = False


def check_clients(ctx: Context, cnets: ClientNets) -> ClientGroups:
    out = ClientGroups()
    group_names = Registry.of_names()
    ok = ctx.whole("clients")
    total = 0  # nodes named so far, for the MAX_CLIENTS bound
    seen: set[str] = set()
    with_guids = 0
    for gi, g in ctx.items("clients"):
        p: Path = ("clients", gi)
        group_names.claim(g["name"], (*p, "name"), "client group")
        members = _members(ctx, g["nodes"], (*p, "nodes"), total)
        if members is None:
            ok = False
            continue
        total += len(members)
        net = _net(ctx, g, p, cnets)
        addrs = None if net is None else _addresses(ctx, g, net, members, p)
        if net is None or addrs is None:
            ok = False
            continue
        out.per_net[net] += len(members)
        start = len(out.names)
        for m, a in zip(members, addrs, strict=True):
            nid = f"{a}@{net}"
            ctx.names.claim(m, (*p, "nodes"), "client")
            if m not in seen:  # a host listed twice is one E-DUP-NAME, not also a NID clash
                ctx.nids.claim(nid, (*p, "nodes"), m)
            seen.add(m)
            out.names.append(m)
            out.nids.append(nid)
        out.net_index.extend([cnets.index[net]] * len(members))
        iface = g.get("interface") or cnets.nets[cnets.index[net]].interface
        if iface not in out.iface_names:
            out.iface_names.append(iface)
        out.iface_index.extend([out.iface_names.index(iface)] * len(members))
        if "guid_base" in g:
            with_guids += 1
            ok = _guid_range(ctx, out, g, p, start) and ok
        out.groups.append((g["name"], start, len(out.names)))
    group_names.report(ctx)
    if with_guids and with_guids != len(out.groups):
        ctx.err(
            ("clients",),
            "E-GUID",
            "guid_base must be given for every client group or for none "
            f"({with_guids} of {len(out.groups)} groups have one)",
        )
        ok = False
    out.complete = ok and len(seen) == len(out.names)  # duplicates: E-DUP-NAME says which
    return out


def no_strangers(ctx: Context, members: list[str], index: Mapping[str, int], path: Path) -> bool:
    """E-ATTACH-NODE for the members of a topology attachment that are not clients; True when
    every member is one."""
    strangers = [m for m in members if m not in index]
    if strangers:
        ctx.err(
            path,
            "E-ATTACH-NODE",
            f"{nodes.fold(strangers[:1000])} "
            f"{'is not a client' if len(strangers) == 1 else 'are not clients'}"
            " (not in any client group)",
        )
    return not strangers


def expand(ctx: Context, text: str, path: Path, room: int = MAX_CLIENTS) -> list[str] | None:
    """Expand a node set of at most ``room`` nodes; report why not otherwise."""
    bound = nodes.count(text)
    if bound > room:
        ctx.err(
            path,
            "E-NODESET",
            f"node set {show(text)} names about {bound} nodes; one inventory holds at most "
            f"{MAX_CLIENTS} clients",
        )
        return None
    try:
        return nodes.expand(text)
    except nodes.NodeSyntaxError as exc:
        hint = ""
        if re.search(r"\[[0-9]+:[0-9]+\]", text):
            hint = f"that is Ansible's range syntax; ClusterShell: {nodes.from_ansible(text)}"
        ctx.err(
            path,
            "E-NODESET",
            f"not a valid node set: {clip(str(exc), 3 * MAX_SHOWN)}",
            hint=hint,
        )
        return None


def _members(ctx: Context, text: str, path: Path, so_far: int) -> list[str] | None:
    """Expand a client node set, refusing unsafe names and runaway sizes."""
    members = expand(ctx, text, path, MAX_CLIENTS - so_far)
    if members is None:
        return None
    if not members:
        ctx.err(path, "E-NODESET", f"node set {show(text)} is empty")
        return None
    bad = [m for m in members if not nodes.HOSTNAME_RE.match(m)]
    if bad:
        more = f" ({len(bad) - 1} more)" if len(bad) > 1 else ""
        ctx.err(
            path,
            "E-NAME",
            f"{show(bad[0])} is not safe as a host name (letters, digits and '-', at most 63; "
            f"no quotes, ';', spaces, '/' or newlines){more}",
        )
        return None
    return members


def _net(ctx: Context, g: dict[str, Any], p: Path, cnets: ClientNets) -> nodes.Net | None:
    """The group's net, if it parses and is listed in client_nets (else reported)."""
    net = read_net(ctx, g["net"], (*p, "net"))
    if net is None or net in cnets.index:
        return net
    if cnets.whole:
        ctx.err(
            (*p, "net"),
            "E-CLIENT-NET",
            f"net {net} of client group {g['name']} is not in client_nets",
            hint="add it to client_nets (with its interface)",
        )
    return None


def _addresses(
    ctx: Context, g: dict[str, Any], net: nodes.Net, members: list[str], p: Path
) -> list[str] | None:
    """The NID address of each member, by the group's ``nid`` rule (reported when it cannot)."""
    rule = g.get("nid", None if net.ip_based else "number")
    if rule is None:
        ctx.err(
            p,
            "E-NID-RULE",
            f"clients of group {g['name']} on {net} need 'nid: {{ip: <first address>}}' "
            "or a list of addresses",
        )
        return None
    rp: Path = (*p, "nid")
    if rule == "number":
        return _numbered(ctx, net, members, rp)
    if isinstance(rule, dict):
        return _from_ip(ctx, net, rule["ip"], len(members), rp)
    if len(rule) != len(members):
        ctx.err(
            rp,
            "E-NID-RULE",
            f"{len(rule)} NID addresses listed for {len(members)} nodes ({g['nodes']})",
        )
        return None
    out = []
    for k, a in enumerate(rule):
        try:
            nid = nodes.parse_nid(f"{a}@{net}")
        except nodes.NodeSyntaxError as exc:
            ctx.err((*rp, k), "E-NID", str(exc))
            return None
        if oversized(nid):
            ctx.err((*rp, k), "E-NID", f"{a} does not fit a 32-bit {net.lnd} address")
            return None
        out.append(nid.addr)
    return out


def _numbered(ctx: Context, net: nodes.Net, members: list[str], rp: Path) -> list[str] | None:
    """``nid: number``: each host name's trailing number, on an LND with numeric NIDs."""
    if net.ip_based:
        ctx.err(
            rp,
            "E-NID-RULE",
            f"{net.lnd} NIDs are IP addresses; 'number' only fits gni, kfi, ptlf and bxi3f",
            hint="give nid: {ip: <address of the first node>}",
        )
        return None
    try:
        addrs = [nodes.host_number(m) for m in members]
    except nodes.NodeSyntaxError as exc:
        ctx.err(rp, "E-NID-RULE", str(exc))
        return None
    big = next((m for m, a in zip(members, addrs, strict=True) if a > MAX_NUMERIC_ADDR), None)
    if big is not None:
        ctx.err(rp, "E-NID-RULE", f"the number of {big} does not fit a 32-bit {net.lnd} address")
        return None
    return [str(a) for a in addrs]


def _from_ip(ctx: Context, net: nodes.Net, ip: str, count: int, rp: Path) -> list[str] | None:
    """``nid: {ip: first}``: consecutive IP addresses, on an IP-based LND; IPv6 (written as
    ``inet_ntop`` prints it) only on an LND whose NIDs Lustre parses as IPv6 (tcp, efa)."""
    if not net.ip_based:
        ctx.err(
            rp,
            "E-NID-RULE",
            f"{net.lnd} NIDs are numbers, not IP addresses",
            hint="use nid: number (the host name's trailing number) or a list",
        )
        return None
    cls: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address] = ipaddress.IPv4Address
    if ":" in ip:
        if net.lnd not in nodes.IPV6_LNDS:
            ctx.err(
                (*rp, "ip"),
                "E-NID-IPV6",
                f"{ip} is IPv6 but the clients are on {net}, whose NIDs Lustre parses as IPv4 only",
                hint="use IPv4 addresses, or a tcp client net",
            )
            return None
        cls = ipaddress.IPv6Address
    try:
        first = int(cls(ip))
    except ValueError:
        ctx.err((*rp, "ip"), "E-IP", f"{ip!r} is not an IPv6 address")
        return None
    last = (1 << (32 if cls is ipaddress.IPv4Address else 128)) - 1
    if first + count - 1 > last:
        ctx.err(
            (*rp, "ip"),
            "E-NID-RULE",
            f"{count} addresses from {ip} run past {cls(last)}",
        )
        return None
    return [str(cls(first + k)) for k in range(count)]


def _guid_range(ctx: Context, out: ClientGroups, g: dict[str, Any], p: Path, start: int) -> bool:
    """Give the group's clients GUIDs from ``guid_base``; False when the range cannot be."""
    count = len(out.names) - start
    base = int(g["guid_base"], 16)
    stop = base + count
    if base == 0 or stop - 1 > MAX_GUID:
        ctx.err(
            (*p, "guid_base"),
            "E-GUID",
            f"guid_base {g['guid_base']} + {count} nodes "
            + ("starts at the null GUID" if base == 0 else "runs past 0xffffffffffffffff"),
        )
        return False
    out.guid_ranges.append(
        GuidRange(base, stop, f"client group {g['name']}", (*p, "guid_base"), start)
    )
    out.guids.extend(f"0x{base + k:016x}" for k in range(count))
    return True
