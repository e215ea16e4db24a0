"""Route tables as CSV for review and scripts: one row per (class or server set, net,
gateway, hop, priority), members as a folded node set (quoted, since node sets hold commas)."""

from __future__ import annotations

from lnetgen import nodes
from lnetgen.emit.base import Context, OutFile, render

FORMAT = "routes"


def _q(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def emit(ctx: Context) -> list[OutFile]:
    plan = ctx.plan
    crow = [
        [
            c.name,
            _q(c.members),
            str(c.count),
            r.net,
            r.gateway,
            str(r.hop),
            str(r.priority),
            _q(r.why),
        ]
        for c in plan.client_classes
        for r in c.routes
    ]
    srow = [
        [
            s.net,
            _q(s.servers),
            str(len(nodes.nodeset(s.servers))),
            r.net,
            r.gateway,
            str(r.hop),
            str(r.priority),
            _q(r.why),
        ]
        for s in plan.server_routes
        for r in s.routes
    ]
    return [
        OutFile(
            "routes/clients.csv",
            render("routes.csv.j2", header=ctx.header, kind="class", rows=crow),
            FORMAT,
            nodes.fold(n for c in plan.client_classes for n in nodes.expand(c.members)),
            "client",
        ),
        OutFile(
            "routes/servers.csv",
            render("routes.csv.j2", header=ctx.header, kind="server_net", rows=srow),
            FORMAT,
            nodes.fold(s.name for s in plan.servers),
            "server",
        ),
    ]
