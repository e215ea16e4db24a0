"""Route tables as CSV for review and scripts: one row per (class or server set, net,
gateway, hop, priority), members as a folded node set (quoted, since node sets hold commas).

Rows are assembled here and joined once: a nearest-neighbor plan for 18,688 clients has 3.2
million rows, and route tables share their ``Route`` objects, so each route's part of a row is
formatted once.
"""

from __future__ import annotations

from collections.abc import Iterable

from lnetgen import nodes
from lnetgen.emit.base import Context, OutFile, render
from lnetgen.plan import Route

FORMAT = "routes"


def _q(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _rows(tables: Iterable[tuple[str, tuple[Route, ...]]]) -> str:
    cache: dict[int, str] = {}
    lines: list[str] = []
    for prefix, routes in tables:
        for r in routes:
            part = cache.get(id(r))
            if part is None:
                part = cache[id(r)] = f"{r.net},{r.gateway},{r.hop},{r.priority},{_q(r.why)}\n"
            lines.append(prefix + part)
    return "".join(lines)


def emit(ctx: Context) -> list[OutFile]:
    plan = ctx.plan
    clients = _rows((f"{c.name},{_q(c.members)},{c.count},", c.routes) for c in plan.client_classes)
    servers = _rows(
        (f"{s.net},{_q(s.servers)},{len(nodes.nodeset(s.servers))},", s.routes)
        for s in plan.server_routes
    )
    return [
        OutFile(
            "routes/clients.csv",
            render("routes.csv.j2", kind="class", body=clients),
            FORMAT,
            nodes.fold(n for c in plan.client_classes for n in nodes.expand(c.members)),
            "client",
        ),
        OutFile(
            "routes/servers.csv",
            render("routes.csv.j2", kind="server_net", body=servers),
            FORMAT,
            nodes.fold(s.name for s in plan.servers),
            "server",
        ),
    ]
