"""Churn between two plans of one site: what a grown (or changed) inventory makes each existing
client change.  A client's route table is its class's set of (storage net, gateway, priority);
a route is *changed* when it is in one table and not the other (a changed priority or gateway
counts as one removal and one addition).  Clients are matched by name; clients only in one plan
are counted apart.  Net names are compared as written: renumbered nets are churn a site pays
for (every host's configuration changes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from lnetgen import nodes
from lnetgen.plan import Plan

RouteKey = tuple[str, str, int]


@dataclass(frozen=True)
class Churn:
    """How much of ``new`` differs from ``old`` for the clients both hold."""

    clients: int  # clients in both plans
    changed: int  # of those, clients whose route table changed
    routes_changed: int  # routes removed + added, summed over those clients
    mean_routes: float  # routes in a client's table in ``new``, on average
    added_clients: int  # clients only in ``new``
    removed_clients: int  # clients only in ``old``

    @property
    def changed_fraction(self) -> float:
        return self.changed / self.clients if self.clients else 0.0

    @property
    def routes_per_client(self) -> float:
        """Routes changed per common client (the tables' churn)."""
        return self.routes_changed / self.clients if self.clients else 0.0


def _tables(plan: Plan) -> tuple[dict[str, int], list[frozenset[RouteKey]]]:
    """Client name -> class index, and each class's route set."""
    owner: dict[str, int] = {}
    tables: list[frozenset[RouteKey]] = []
    for i, cc in enumerate(plan.client_classes):
        tables.append(frozenset((r.net, r.gateway, r.priority) for r in cc.routes))
        for name in nodes.expand(cc.members):
            owner[name] = i
    return owner, tables


def churn(old: Plan, new: Plan) -> Churn:
    """The churn from ``old`` to ``new`` (see the module docstring)."""
    o_owner, o_tables = _tables(old)
    n_owner, n_tables = _tables(new)
    pairs = Counter((o_owner[c], n_owner[c]) for c in o_owner.keys() & n_owner.keys())
    changed = routes = 0
    for (oc, nc), count in pairs.items():
        diff = len(o_tables[oc] ^ n_tables[nc])
        if diff:
            changed += count
            routes += diff * count
    n = sum(pairs.values())
    sizes = [len(n_tables[i]) for i in n_owner.values()]
    return Churn(
        clients=n,
        changed=changed,
        routes_changed=routes,
        mean_routes=sum(sizes) / len(sizes) if sizes else 0.0,
        added_clients=len(n_owner.keys() - o_owner.keys()),
        removed_clients=len(o_owner.keys() - n_owner.keys()),
    )
