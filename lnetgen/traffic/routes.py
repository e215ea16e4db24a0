"""Which routes carry traffic: ``--fail`` names resolved to routers, and with those routers
down, each live route's share of its pair's traffic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from lnetgen import nodes
from lnetgen.diagnostics import show
from lnetgen.plan import Plan
from lnetgen.traffic.index import PlanIndex, Side
from lnetgen.traffic.rows import State, evaluate
from lnetgen.traffic.settings import BoolArray, FloatArray, IntArray, input_error

#: unknown ``--fail`` names quoted in the error, the rest counted
_MAX_NAMED = 10


@dataclass(frozen=True)
class Down:
    """What a ``--fail`` takes down.

    ``routers``: the routers named, those of a storage net or group, and every router cabled
    to a failed leaf module or switch.  ``servers``: every server named and every server
    cabled to a failed leaf module or switch; ``named_servers`` the ones named.  A dead leaf
    module (or a whole switch) is a physical failure: it cuts off every port cabled to it, the
    servers' as well as the routers', and an administrator asking what losing a line card does
    expects the servers on it to go dark too.  A server down (named, or cut off) takes its
    targets with it unless its failover partner is up: Lustre then mounts them on the partner,
    which carries their load as well as its own (see :func:`carriers`).  A Multi-Rail host's
    ports are all on one leaf module, so it goes down whole.  Naming a router, a storage net
    or a group fails routers only; naming a server fails that server only (its routers stay
    up), whatever the strategy."""

    routers: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    named_servers: tuple[str, ...] = ()


def _on(label: str, name: str) -> bool:
    """Whether a host cabled to ``label`` (``switch/leaf``, or a TOR ``switch``) is cut off
    when ``name`` (a leaf label or a switch) fails."""
    return label == name or label.startswith(name + "/")


def resolve_down(plan: Plan, names: Iterable[str]) -> Down:
    """The routers and servers ``--fail`` arguments take down: a router, a leaf label
    (``core1/L01``) or switch name (every router and server cabled to it, see :class:`Down`),
    a server (that server alone: its targets move to a live failover partner or are lost),
    a storage net (its priority-0 routers) or a group name (the same).  A name is looked up
    in that order, so a server is failed as a server under every strategy -- projection
    names each net's group after its OSS, and ``--fail oss01`` used to fail oss01's routers
    while oss01 stayed up (its net, ``o2ib100``, still names those routers).  Raises
    ``InputError`` for a name that is none of these."""
    routers = [r.name for r in plan.routers]
    leaf = {r.name: r.leaf for r in plan.routers}
    server_leaf = {s.name: s.leaf for s in plan.servers}
    out: set[str] = set()
    dark: set[str] = set()
    named: set[str] = set()
    unknown: list[str] = []
    for name in names:
        if name in leaf:
            out.add(name)
            continue
        by_leaf = [r for r in routers if _on(leaf[r], name)]
        cut = [s for s, lab in server_leaf.items() if _on(lab, name)]
        if by_leaf or cut:
            out.update(by_leaf)
            dark.update(cut)
            continue
        if name in server_leaf:
            dark.add(name)
            named.add(name)
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
        quoted = ", ".join(map(show, unknown[:_MAX_NAMED]))
        if len(unknown) > _MAX_NAMED:
            quoted += f" and {len(unknown) - _MAX_NAMED:,} more"
        raise input_error(
            "E-FAIL-NAME",
            f"--fail {quoted}: not a router, leaf, switch, server, storage net or group of this "
            "plan",
        )
    return Down(
        tuple(r for r in routers if r in out),
        tuple(s.name for s in plan.servers if s.name in dark),
        tuple(s.name for s in plan.servers if s.name in named),
    )


def resolve_failures(plan: Plan, names: Iterable[str]) -> tuple[str, ...]:
    """The routers ``--fail`` arguments take down (:func:`resolve_down`'s ``routers``)."""
    return resolve_down(plan, names).routers


#: ``carriers``: a server whose targets no live server carries.
LOST_SERVER = -1


def carriers(ix: PlanIndex, down: Sequence[str]) -> IntArray:
    """Per server of ``ix``, the server that carries its targets with the servers ``down``
    cut off: itself when it is up; its failover partner (``Server.failover``) when it is
    down and the partner is up -- Lustre mounts the targets on the partner, whose NIDs the
    clients already hold (``--servicenode``); otherwise :data:`LOST_SERVER`.

    A file system whose MDS is lost (down without a live partner) serves no I/O at all --
    no file can be opened or created -- so every server of it is lost too.  With several
    MDTs (DNE) a lost MDT takes only part of the namespace; lnetgen counts the file system
    as down, the administrator's worst case."""
    S = len(ix.servers)
    out = np.arange(S, dtype=np.int64)
    if not down or not S:
        return out
    sid = {s: i for i, s in enumerate(ix.servers)}
    gone = set(down)
    site = {s.name: s for s in ix.site.servers}
    for name in down:
        i = sid.get(name)
        if i is None:
            continue
        partner = site[name].failover if name in site else ""
        up = partner in sid and partner not in gone
        out[i] = sid[partner] if up else LOST_SERVER
    dead_fs = {
        site[s].fs
        for s in ix.servers
        if s in site and site[s].role == "mds" and out[sid[s]] == LOST_SERVER
    }
    if dead_fs:
        for s in ix.servers:
            if s in site and site[s].fs in dead_fs:
                out[sid[s]] = LOST_SERVER
    return out


def failed_mask(ix: PlanIndex, failed: Sequence[str]) -> BoolArray:
    """Per router: down (``failed`` are router names)."""
    mask = np.zeros(max(len(ix.routers), 1), dtype=bool)
    for name in failed:
        mask[ix.router_id(name)] = True
    return mask


def fail_state(ix: PlanIndex, fail: Sequence[str]) -> tuple[BoolArray, IntArray]:
    """For ``--fail`` names: per router, down; per server, who carries its targets
    (:func:`carriers`)."""
    down = resolve_down(ix.plan, fail) if fail else Down()
    return failed_mask(ix, down.routers), carriers(ix, down.servers)


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
