"""Route tables as CSV for review and scripts, members as a folded node set (quoted, since
node sets hold commas).

* ``routes/clients.csv``: one row per route of each client route set (``Plan.route_sets``):
  ``client_net, members, count, net, gateway, hop, priority, why``, where ``members`` are the
  clients on ``client_net`` that reach ``net`` through exactly these routes.  A client's table
  is the rows whose ``members`` hold it.  Folded so, nearest-neighbor on Spider is 1,152 rows
  (32 nets x 6 choices of primary gateway x 6 routes), not 3.2 million (one per class route).
* ``routes/servers.csv``: one row per (server set, net, gateway, hop, priority).
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
    clients = _rows(
        (f"{rs.client_net},{_q(members)},{rs.count},", rs.routes)
        for rs, members in zip(plan.route_sets[0], plan.route_set_members, strict=True)
    )
    servers = _rows(
        (f"{s.net},{_q(s.servers)},{len(nodes.nodeset(s.servers))},", s.routes)
        for s in plan.server_routes
    )
    return [
        OutFile(
            "routes/clients.csv",
            render("routes.csv.j2", kind="client_net", body=clients),
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
