"""lnetctl YAML (/etc/lnet.conf for ``lnetctl import``), laid out as ``lnetctl export`` writes
it: ``net:`` before ``route:``, one route entry per gateway NID with explicit ``hop`` and
``priority``, ``routing: enable: 1`` on routers.  Clients per class, routers and servers per
host; a server lists its storage net, then its fabric's server net (same interface).  A router
or server with Multi-Rail ports (``rails``) has several NIs under one ``net type``, as ``lnetctl
export`` prints them and as ``lnetctl import`` reads them (``liblnetconfig.c`` adds one NI per
item of ``local NI(s)``); routes name its first NID, the other NIDs being the same LNet peer.  The
inventory's tunables (:mod:`lnetgen.tunables`) go where ``lnetctl export`` prints them: each
NI's ``tunables:``, ``buffers:`` after ``routing:``, and ``global:`` last (with
``drop_asym_route: 1`` when the plan's symmetry is proven).

A client class's ``route:`` entries are the text of its route sets (``Plan.route_sets``), each
set written once and reused: nearest-neighbor on Spider has 16,873 class files of 192 routes
but 196 distinct sets.  With ``lustre: {udsp: true}`` a client class with UDSP router rules
(``lnetgen.udsp``: the best-priority gateways of each net preferred) also gets
``udsp/<class>.sh``, the ``lnetctl udsp add`` commands to run after the import: no YAML form of
a working router rule imports (see ``lnetgen.udsp``), so the lnetctl files carry none.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from lnetgen import udsp
from lnetgen.emit.base import Context, OutFile, render
from lnetgen.plan import Route
from lnetgen.tunables import host_settings

FORMAT = "lnetctl"
#: The format of the UDSP scripts (``udsp/<class>.sh``) the lnetctl files go with.
UDSP_FORMAT = "udsp"


def _file(
    ctx: Context,
    name: str,
    role: str,
    hosts: str,
    nis: Sequence[tuple[str, str]],
    route_text: str,
    routing: bool,
) -> OutFile:
    """One file; ``nis`` are the host's (net, interface) pairs, written as ``lnetctl export``
    prints them: one ``net type`` entry per net, its NIs (several with Multi-Rail) under
    ``local NI(s)``."""
    by_net: dict[str, list[str]] = {}
    for net, iface in nis:
        by_net.setdefault(net, []).append(iface)
    tun = host_settings(ctx.site, role, list(by_net), ctx.symmetric)
    text = render(
        "lnetctl.yaml.j2",
        header=ctx.header,
        role=role,
        hosts=hosts,
        nets=[
            {"net": net, "interfaces": ifaces, "tunables": tun.ni(net.rstrip("0123456789"))}
            for net, ifaces in by_net.items()
        ],
        route_text=route_text,
        routing=routing,
        buffers=tun.buffers() if routing else {},
        globals=tun.globals(),
    )
    return OutFile(f"lnetctl/{name}.yaml", text, FORMAT, hosts, role)


def route_entries(routes: Sequence[Route]) -> str:
    """The ``route:`` entries of ``routes`` as ``lnetctl export`` prints them."""
    return "".join(
        f"    - net: {r.net}\n      gateway: {r.gateway}\n      hop: {r.hop}\n"
        f"      priority: {r.priority}\n"
        for r in routes
    )


def emit(ctx: Context) -> Iterator[OutFile]:
    plan = ctx.plan
    sets, class_sets = plan.route_sets
    texts = [route_entries(rs.routes) for rs in sets]
    rules = udsp.class_rules(plan, ctx.site.lustre.udsp)
    for cc, idx, cls_rules in zip(plan.client_classes, class_sets, rules, strict=True):
        yield _file(
            ctx,
            cc.name,
            "client",
            cc.members,
            [(cc.net, cc.interface)],
            "".join(texts[i] for i in idx),
            False,
        )
        if cls_rules:
            text = udsp.script(cls_rules, ctx.header, cc.members)
            yield OutFile(f"udsp/{cc.name}.sh", text, UDSP_FORMAT, cc.members, "client")
    for r in plan.routers:
        yield (
            _file(
                ctx,
                r.name,
                "router",
                r.name,
                [(i.net, i.interface) for i in r.interfaces],
                "",
                True,
            )
        )
    routes = plan.routes_for_server()
    for s in plan.servers:
        yield (
            _file(
                ctx,
                s.name,
                "server",
                s.name,
                [(i.net, i.interface) for i in s.interfaces],
                route_entries(routes.get(s.name, ())),
                False,
            )
        )
