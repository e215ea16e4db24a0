"""Storage-side IP addresses of routers and servers: IPv4, or IPv6 (large NIDs, Lustre 2.16+)
on a storage LND that can carry it.

The schema admits both forms; here an IPv6 address is checked exactly (E-IP) and written
canonically (``fd00::1``, as ``inet_ntop`` prints it, so two spellings of one address are one
address), and refused on an LND whose NIDs lustre-release parses as IPv4 only (E-NID-IPV6:
``lib/libcfs/nidstrings.c`` gives the large-address parser to ``tcp`` and ``efa`` alone) or on
a site where any role's stated release is older than 2.16 (E-NID-IPV6-TARGET): an IPv6 NID on
one side reaches every host of the path (a client's requests carry the servers' NIDs, a server
answers the clients'), so clients, routers and servers all need large NIDs.  Client NIDs are
checked the same way (:func:`check_client_ipv6`).  The kernel's ``routes=``
grammar cannot carry an IPv6 gateway (``:`` separates the priority), so ``generate`` writes no
modprobe routes for such a site (``lnetgen.emit.modprobe``).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from lnetgen.inventory.context import Context
from lnetgen.nodes import IPV6_LNDS
from lnetgen.target import ROLES, Targets, show
from lnetgen.yamlsrc import Path

#: Large NIDs (IPv6 addresses) arrived in this release.
IPV6_SINCE = (2, 16)


def canonical_ip(ctx: Context, text: str, path: Path) -> str:
    """``text`` as one spelling: IPv4 unchanged, IPv6 compressed; E-IP when it is neither."""
    if ":" not in text:
        return text
    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError:
        ctx.err(path, "E-IP", f"{text!r} is not an IPv6 address")
        return text


def check_ipv6(ctx: Context, storage_lnd: str, lustre: Targets) -> None:
    """E-NID-IPV6 / E-NID-IPV6-TARGET for IPv6 storage addresses the site cannot use."""
    where: list[tuple[Path, str]] = []
    for i, r in ctx.items("routers"):
        where.append((("routers", i, "storage", "ip"), str(r.get("storage", {}).get("ip", ""))))
        where += _rail_ips(r, ("routers", i))
    for i, s in ctx.items("servers"):
        where.append((("servers", i, "ip"), str(s.get("ip", ""))))
        where += _rail_ips(s, ("servers", i))
    v6 = [(p, ip) for p, ip in where if ":" in ip]
    if not v6:
        return
    if storage_lnd not in IPV6_LNDS:
        for p, ip in v6:
            ctx.err(
                p,
                "E-NID-IPV6",
                f"{ip} is IPv6 but the storage LND is {storage_lnd}, whose NIDs Lustre parses as "
                "IPv4 only",
                hint="use IPv4 addresses, or strategy.storage_lnd: tcp",
            )
        return
    _large_nids_everywhere(ctx, lustre, v6[0][0])


def check_client_ipv6(ctx: Context, lustre: Targets) -> None:
    """E-NID-IPV6-TARGET for IPv6 client NIDs (a client group's ``nid``, a router's
    ``client.nid``) on a site whose clients, routers or servers run a release before 2.16.
    Whether the client net's LND can carry them is checked where each NID is read (E-NID,
    E-NID-IPV6)."""
    where: list[Path] = []
    for i, g in ctx.items("clients"):
        rule = g.get("nid")
        texts = (
            [rule.get("ip")] if isinstance(rule, dict) else rule if isinstance(rule, list) else []
        )
        if any(":" in str(t) for t in texts):
            where.append(("clients", i, "nid"))
    for i, r in ctx.items("routers"):
        nid = str(r.get("client", {}).get("nid", ""))
        if ":" in nid.rpartition("@")[0]:
            where.append(("routers", i, "client", "nid"))
    if where:
        _large_nids_everywhere(ctx, lustre, where[0])


def _large_nids_everywhere(ctx: Context, lustre: Targets, path: Path) -> None:
    """E-NID-IPV6-TARGET at ``path`` for each role older than 2.16: an IPv6 NID reaches every
    host of the path (a client's requests carry the servers' NIDs, a server answers the
    clients' through the routers)."""
    for role in ROLES:
        v = lustre.of(role)
        if v is not None and v < IPV6_SINCE:
            ctx.err(
                path,
                "E-NID-IPV6-TARGET",
                f"IPv6 NIDs need Lustre {show(IPV6_SINCE)} or later; the {role}s run {show(v)}",
            )


def _rail_ips(host: dict[str, Any], p: Path) -> list[tuple[Path, str]]:
    """The addresses of a host's ``rails`` with their paths."""
    rails = host.get("rails")
    if not isinstance(rails, list):
        return []
    return [
        ((*p, "rails", k, "ip"), str(r.get("ip", "")))
        for k, r in enumerate(rails)
        if isinstance(r, dict)
    ]
