"""Route tables as CSV for review and scripts, members as a folded node set (quoted, since
node sets hold commas).

* ``routes/client_sets.csv``: one row per client route set (``Plan.route_sets``): ``set`` (its
  number), ``client_net``, ``net``, ``count`` and ``members``, the clients on ``client_net`` that
  reach ``net`` through exactly the routes of that set;
* ``routes/clients.csv``: one row per route of each set: ``set, client_net, count, net,
  gateway, hop, priority, why``.  A client's table is the rows of the sets whose members hold
  it.  Folded so, nearest-neighbor on Spider is 1,152 rows (32 nets x 6 choices of primary
  gateway x 6 routes), not 3.2 million (one per class route), and each set's node set is
  written once (Blue Waters' round-robin sets are node sets of 20 kB);
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
    sets = plan.route_sets[0]
    clients = _rows((f"{i},{rs.client_net},{rs.count},", rs.routes) for i, rs in enumerate(sets))
    set_rows = "".join(
        f"{i},{rs.client_net},{rs.net},{rs.count},{_q(members)}\n"
        for i, (rs, members) in enumerate(zip(sets, plan.route_set_members, strict=True))
    )
    every_client = nodes.fold(n for c in plan.client_classes for n in nodes.expand(c.members))
    servers = _rows(
        (f"{s.net},{_q(s.servers)},{len(nodes.nodeset(s.servers))},", s.routes)
        for s in plan.server_routes
    )
    return [
        OutFile(
            "routes/client_sets.csv",
            "set,client_net,net,count,members\n" + set_rows,
            FORMAT,
            every_client,
            "client",
        ),
        OutFile(
            "routes/clients.csv",
            render("routes.csv.j2", columns="set,client_net,count", body=clients),
            FORMAT,
            every_client,
            "client",
        ),
        OutFile(
            "routes/servers.csv",
            render("routes.csv.j2", columns="server_net,members,count", body=servers),
            FORMAT,
            nodes.fold(s.name for s in plan.servers),
            "server",
        ),
    ]
