"""Which routes carry traffic: ``--fail`` names resolved to routers, and with those routers
down, each live route's share of its pair's traffic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen import nodes
from lnetgen.plan import Plan
from lnetgen.traffic.index import PlanIndex, Side
from lnetgen.traffic.rows import State, evaluate
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray, input_error

#: unknown ``--fail`` names quoted in the error, the rest counted
_MAX_NAMED = 10


def resolve_failures(plan: Plan, names: Iterable[str]) -> tuple[str, ...]:
    """Router names for ``--fail`` arguments: a router, a leaf label (``core1/L01``) or switch
    name (all its routers), a storage net (its priority-0 routers) or a group name (the same).
    Raises ``InputError`` for a name that is none of these."""
    routers = [r.name for r in plan.routers]
    leaf = {r.name: r.leaf for r in plan.routers}
    out: set[str] = set()
    unknown: list[str] = []
    for name in names:
        if name in leaf:
            out.add(name)
            continue
        by_leaf = [r for r in routers if leaf[r] == name or leaf[r].startswith(name + "/")]
        if by_leaf:
            out.update(by_leaf)
            continue
        try:
            canon = nodes.canonical_net(name)
        except nodes.NodeSyntaxError:
            canon = ""
        nets = [n for n in plan.storage_nets() if n.name == canon or n.group == name]
        if nets:
            for n in nets:
                out.update(n.primary_routers)
            continue
        unknown.append(name)
    if unknown:
        # the first few: --fail 'rtr[1-999999]' printed every name, a 10.9 MB line
        named = ", ".join(unknown[:_MAX_NAMED])
        if len(unknown) > _MAX_NAMED:
            named += f" and {len(unknown) - _MAX_NAMED:,} more"
        raise input_error(
            "E-FAIL-NAME",
            f"--fail {named}: not a router, leaf, switch, storage net or group of this plan",
        )
    return tuple(r for r in routers if r in out)


def failed_mask(ix: PlanIndex, failed: Sequence[str]) -> BoolArray:
    """Per router: down (``failed`` are router names)."""
    mask = np.zeros(max(len(ix.routers), 1), dtype=bool)
    for name in failed:
        mask[ix.router_id(name)] = True
    return mask


def fail_mask(ix: PlanIndex, fail: Sequence[str]) -> BoolArray:
    """Per router: down, for ``--fail`` names (see :func:`resolve_failures`)."""
    return failed_mask(ix, resolve_failures(ix.plan, fail) if fail else ())


@dataclass(frozen=True, eq=False)
class Shares:
    """The routes that carry traffic now, one row each, sorted by pair key (``sender * width +
    destination net``): the router and the share of the pair's traffic it takes (1/k for each
    of k gateways at the best live priority)."""

    key: IntArray
    router: IntArray
    share: FloatArray
    width: int
    first: IntArray  # per pair key: index of its first row (len = keys + 1)

    def rows_of(self, keys: IntArray) -> tuple[IntArray, IntArray]:
        """For pair keys: (position in ``keys``, row index) of every row of each key."""
        return self.rows_in(keys, keys + 1)

    def rows_in(self, lo_key: IntArray, hi_key: IntArray) -> tuple[IntArray, IntArray]:
        """For key ranges ``[lo_key[i], hi_key[i])``: (i, row index) of every row in each."""
        lo = self.first[lo_key]
        counts = self.first[hi_key] - lo
        owner = np.repeat(np.arange(len(lo), dtype=np.int64), counts)
        offset = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        return owner, np.repeat(lo, counts) + offset


def shares(side: Side, st: State) -> Shares:
    """The rows of ``side`` that carry traffic in state ``st``, with their shares."""
    a = st.active
    key = side.rows.key[a]
    share = 1.0 / np.maximum(st.live_n[key], 1).astype(np.float64)
    first = np.searchsorted(key, np.arange(side.nkeys + 1, dtype=np.int64)).astype(np.int64)
    return Shares(key, side.rows.router[a], share, side.width, first)


def client_shares(ix: PlanIndex, failed: Sequence[str] = ()) -> Shares:
    """Client-side routes carrying traffic (key ``class * len(nets) + net``) with ``failed``
    routers down."""
    client = ix.sides()[0]
    return shares(client, evaluate(client.rows, client.nkeys, failed_mask(ix, failed)))


def best_gateways(ix: PlanIndex, cls: int, net: int) -> tuple[str, ...]:
    """Router names class ``cls`` uses for storage net ``net`` with every router up."""
    rows = ix.crows
    key = cls * len(ix.nets) + net
    lo, hi = (int(v) for v in np.searchsorted(rows.key, [key, key + 1]))
    ok = rows.ok[lo:hi]
    if not ok.any():
        return ()
    prio = rows.prio[lo:hi]
    best = prio[ok].min()
    sel = rows.router[lo:hi][ok & (prio == best)]
    return tuple(sorted({ix.routers[r] for r in sel.tolist()}))
