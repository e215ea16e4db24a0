"""lnetctl YAML (/etc/lnet.conf for ``lnetctl import``), laid out as ``lnetctl export`` writes
it: ``net:`` before ``route:``, one route entry per gateway NID with explicit ``hop`` and
``priority``, ``routing: enable: 1`` on routers.  Clients per class, routers and servers per
host; a server lists its storage net, then its fabric's server net (same interface).
"""

from __future__ import annotations

from lnetgen.emit.base import Context, OutFile, render
from lnetgen.plan import Route

FORMAT = "lnetctl"


def _file(
    ctx: Context,
    name: str,
    role: str,
    hosts: str,
    nets: list[dict[str, str]],
    routes: tuple[Route, ...],
    routing: bool,
) -> OutFile:
    text = render(
        "lnetctl.yaml.j2",
        header=ctx.header,
        role=role,
        hosts=hosts,
        nets=nets,
        routes=routes,
        routing=routing,
    )
    return OutFile(f"lnetctl/{name}.yaml", text, FORMAT, hosts, role)


def emit(ctx: Context) -> list[OutFile]:
    plan = ctx.plan
    out = []
    for cc in plan.client_classes:
        out.append(
            _file(
                ctx,
                cc.name,
                "client",
                cc.members,
                [{"net": cc.net, "interface": cc.interface}],
                cc.routes,
                False,
            )
        )
    for r in plan.routers:
        out.append(
            _file(
                ctx,
                r.name,
                "router",
                r.name,
                [{"net": i.net, "interface": i.interface} for i in r.interfaces],
                (),
                True,
            )
        )
    routes = plan.routes_for_server()
    for s in plan.servers:
        out.append(
            _file(
                ctx,
                s.name,
                "server",
                s.name,
                [{"net": net, "interface": s.interface} for net in s.networks],
                routes.get(s.name, ()),
                False,
            )
        )
    return out
