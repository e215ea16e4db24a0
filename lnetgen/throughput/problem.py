"""The problem a prediction solves (``lnetgen.throughput.predict``): every (rank, OST, router)
subflow, the resources it crosses and its torus path.

The subflows are laid out a slice of ranks at a time (about :data:`SLICE` subflows), each
slice adding its ranks' columns to every kind of resource, so that the memory a prediction
needs is the problem's, not a few times every subflow's: Blue Waters with four million ranks
makes 14 million subflows.  A site with resources named by the subflows that cross them
(OpenSM's routes, a dragonfly's links) is laid out in one slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from lnetgen.model import Site
from lnetgen.throughput.classes import Classes
from lnetgen.throughput.fabric import FabricRoutes
from lnetgen.throughput.links import (
    dragonfly_links,
    fabric_links,
    io_ports,
    leaf_uplinks,
    port_caps,
    spine_links,
    uplink_caps,
)
from lnetgen.throughput.share import Problem, Torus, stack_rows
from lnetgen.throughput.workload import MAX_SUBFLOWS, Ranks
from lnetgen.traffic import IntArray, PlanIndex
from lnetgen.traffic.routes import Shares, fail_state, shares
from lnetgen.traffic.rows import evaluate
from lnetgen.traffic.settings import BoolArray, FloatArray

#: Resource kinds, in the order ids are numbered.
KINDS = (
    "injection",
    "fabric link",
    "local link",
    "global link",
    "router",
    "router port",
    "leaf uplinks",
    "leaf downlinks",
    "spine link",
    "server port",
    "oss",
    "ost",
)
#: The ``Rates`` field behind each kind (uplinks: per link, times the leaf's uplink count).
RATE_OF = {
    "injection": "injection",
    "fabric link": "fabric_link",
    "local link": "local_link",
    "global link": "global_link",
    "router": "router",
    "router port": "ib_link",
    "leaf uplinks": "uplink",
    "leaf downlinks": "uplink",
    "spine link": "uplink",
    "server port": "ib_link",
    "oss": "oss",
    "ost": "ost",
}
#: Subflows laid out at a time (bounded memory).
SLICE = 1_000_000


@dataclass(frozen=True, eq=False)
class Subflows:
    """Each (rank, OST, router) subflow's rank, router and share of its rank, and each rank's
    node: what the torus part is laid out from (``torus_of``), kept for laying it out again
    with the routers elsewhere (``lnetgen.throughput.moved``)."""

    rank: IntArray
    router: IntArray
    w: FloatArray
    node: IntArray
    op: str


@dataclass(frozen=True, eq=False)
class _Built:
    problem: Problem
    names: tuple[tuple[str, str], ...]  # per resource: (kind, name)
    unknown: frozenset[str]  # kinds of which a resource crossed has no known rate
    subflows: Subflows | None = None  # with ``keep_subflows`` only
    #: the ranks' classes when the problem's columns are classes (``lnetgen.throughput.classes``)
    classes: Classes | None = None
    #: per column: the rank has no live route to some OST of its file (``_Pairs.stranded``)
    stranded: BoolArray | None = None
    #: what the job's paths cross that the problem has no resource for, one phrase each
    #: (``Prediction.unmodelled``): the figure is an upper bound
    unmodelled: tuple[str, ...] = ()
    #: per column, the node of its rank (of its class's first rank)
    node: IntArray | None = None


@dataclass(eq=False)
class _Kind:
    labels: Sequence[str]
    caps: FloatArray
    present: bool = False
    blocks: dict[int, sp.csc_matrix] = field(default_factory=dict)  # per slice


@dataclass(eq=False)
class _Resources:
    """The resources added so far, kind by kind in the order first added; ``add`` takes the
    subflows of the current slice (``start``: its first rank; ``rank``, ``w``)."""

    njob: int
    kinds: dict[str, _Kind] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)
    unmodelled: set[str] = field(default_factory=set)  # ``_Built.unmodelled``
    part: int = 0
    start: int = 0
    width: int = 0
    rank: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    w: FloatArray = field(default_factory=lambda: np.zeros(0))

    def add(
        self,
        kind: str,
        labels: Sequence[str],
        cap_each: FloatArray,
        ids: IntArray,
        subs: IntArray | None = None,
    ) -> None:
        """Resources ``labels`` of ``kind``; subflow s crosses ``ids[s]`` (-1: none), or
        with ``subs`` subflow ``subs[i]`` crosses ``ids[i]``.  A resource whose rate is unknown
        limits nothing, and its kind is noted."""
        k = self.kinds.setdefault(kind, _Kind(labels, cap_each))
        on = ids >= 0
        if not on.any():
            return
        which = subs[on] if subs is not None else np.nonzero(on)[0]
        if not np.isfinite(cap_each).all():
            mine = ids[on][self.rank[which] < self.njob]
            if not np.isfinite(cap_each[np.unique(mine)]).all():
                self.unknown.add(kind)  # some resource the job crosses has no known rate
            if not np.isfinite(cap_each).any():
                return
        k.present = True
        cols = self.rank[which] - self.start
        block = sp.csc_matrix((self.w[which], (ids[on], cols)), shape=(len(labels), self.width))
        block.sum_duplicates()
        k.blocks[self.part] = block

    def matrix(
        self, starts: Sequence[int], n: int
    ) -> tuple[list[tuple[str, str]], FloatArray, sp.csc_matrix]:
        """The names, capacities and use matrix of every kind present (the slices' columns
        begin at ``starts``, the last ending at ``n``)."""
        kinds = [(name, k) for name, k in self.kinds.items() if k.present]
        names = [(name, lab) for name, k in kinds for lab in k.labels]
        caps = np.asarray([c for _, k in kinds for c in k.caps.tolist()], dtype=np.float64)
        nnz = sum(b.nnz for _, k in kinds for b in k.blocks.values())
        indptr = np.zeros(n + 1, dtype=np.int64)
        data = np.empty(nnz)
        indices = np.empty(nnz, dtype=np.int32 if len(names) < 2**31 else np.int64)
        at = 0
        for part, (lo, hi) in enumerate(zip(starts, [*starts[1:], n], strict=True)):
            blocks = [_pop(k, part, hi - lo) for _, k in kinds]
            m = stack_rows(blocks, hi - lo)
            data[at : at + m.nnz] = m.data
            indices[at : at + m.nnz] = m.indices
            indptr[lo + 1 : hi + 1] = at + m.indptr[1:]
            at += m.nnz
        use = sp.csc_matrix((data, indices, indptr), shape=(len(names), n))
        use.has_sorted_indices = True
        return names, caps, use


def _pop(k: _Kind, part: int, width: int) -> sp.csc_matrix:
    """The block of slice ``part`` of kind ``k``, taken out; empty when no subflow of it
    crosses one."""
    block = k.blocks.pop(part, None)
    return sp.csc_matrix((len(k.labels), width)) if block is None else block


@dataclass(frozen=True)
class _Pairs:
    """The (rank, OST) pairs of one direction, each with the key of the route that carries it
    (``shares`` rows ``first[key]:first[key + 1]``, ``per_pair`` of them) and whether it is
    laid out (``usable``).  Without an OST rate, one pair per (rank, server), ``ost`` -1.

    ``stranded``, per rank: some OST of its file has no live route (no gateway alive, the
    client in no class, or the OST's server cut off with no partner carrying it), or its
    client has no live route to an MDS of its file system (:func:`_mds_cut`).  Such a rank
    hangs in its write or read -- Lustre waits for the OST, or cannot open the file -- so it
    moves nothing and the run never ends: its pairs are not laid out at all (not
    ``usable``), and the prediction counts it (``Prediction.unrouted``) instead of leaving
    it out silently."""

    rank: IntArray
    server: IntArray
    ost: IntArray
    weight: FloatArray
    keys: IntArray
    usable: BoolArray
    shares: Shares
    per_pair: IntArray
    stranded: BoolArray

    def subflows(self, classes: Classes | None = None) -> int:
        """The (rank, OST, router) subflows these pairs make (``classes``: the ranks are
        these classes, each counted by its ranks)."""
        per = self.per_pair if classes is None else self.per_pair * classes.count[self.rank]
        return int(per.sum())


def _pairs(
    site: Site, ix: PlanIndex, ranks: Ranks, op: str, mask: BoolArray, carrier: IntArray
) -> _Pairs:
    """The pairs of ``ranks`` as ``op`` sends them, with failed routers ``mask`` and each
    OST's server replaced by the one that carries its targets (``carrier``, -1: none)."""
    S = len(ix.servers)
    nnet, ncnet = len(ix.nets), len(ix.client_nets)
    client, server = ix.sides()
    p_rank, p_ost, p_w = ranks.pair_rank, ranks.pair_ost, ranks.pair_w
    ost_server = carrier[ranks.ost_server] if len(ranks.ost_server) else ranks.ost_server
    ost_server = np.where(ost_server < 0, S, ost_server)  # S: no server carries the OST
    if site.rates.ost is None:  # OSTs limit nothing: one pair per (rank, server) is enough
        key = p_rank * (S + 1) + ost_server[p_ost]
        ukey, inv = np.unique(key, return_inverse=True)
        p_w = np.bincount(inv, weights=p_w, minlength=len(ukey)).astype(np.float64)
        p_rank, p_srv, p_ost = ukey // (S + 1), ukey % (S + 1), np.full(len(ukey), -1)
    else:
        p_srv = ost_server[p_ost]
    carried = p_srv < S
    p_srv = np.where(carried, p_srv, 0)
    p_node = ranks.node[p_rank]
    # the live routes of both sides: the op's carries the pairs, both reach the MDS
    csh = shares(client, evaluate(client.rows, client.nkeys, mask))
    ssh = shares(server, evaluate(server.rows, server.nkeys, mask))
    # each pair's route: the routers that carry it
    if op == "write":
        sh = csh
        cls = ix.client_class[p_node]
        keys = np.maximum(cls, 0) * nnet + ix.server_net[p_srv]
        usable = cls >= 0
    else:
        sh = ssh
        grp = ix.server_group[p_srv]
        kn = ix.client_cnet[p_node]
        keys = np.maximum(grp, 0) * ncnet + np.maximum(kn, 0)
        usable = (grp >= 0) & (kn >= 0)
    per_pair = sh.first[keys + 1] - sh.first[keys]
    # a rank with any OST out of reach hangs: none of its pairs is laid out
    stranded = _mds_cut(ix, ranks, carrier, csh, ssh)
    stranded[p_rank[~(usable & carried & (per_pair > 0))]] = True
    usable = usable & carried & ~stranded[p_rank]
    return _Pairs(p_rank, p_srv, p_ost, p_w, keys, usable, sh, per_pair, stranded)


def _mds_cut(ix: PlanIndex, ranks: Ranks, carrier: IntArray, csh: Shares, ssh: Shares) -> BoolArray:
    """Per rank: its client has no live route to some MDS of its file system (the one that
    carries the MDS's targets, ``carrier``), either way -- a request to the MDS over the
    client's live routes ``csh``, the reply over the MDS's ``ssh`` -- whatever the rank's op:
    without it the rank cannot open or create its file, so it hangs as a rank whose MDS is down
    does
    (``lnetgen.traffic.routes.carriers``, which counts a file system with any MDS lost as
    down: every MDS, the administrator's worst case with several MDTs, is needed here too).
    The MGS is not: a mounted client keeps doing I/O without it."""
    n = len(ranks.node)
    out = np.zeros(n, dtype=bool)
    if not len(ranks.pair_rank) or not len(ix.servers):
        return out
    role = {s.name: (s.role, s.fs) for s in ix.site.servers}
    names = sorted({fs for _, fs in role.values()})
    fs_id = np.asarray([names.index(role[x][1]) if x in role else -1 for x in ix.servers])
    rank_fs = np.full(n, -1, dtype=np.int64)  # one file per rank: one file system
    rank_fs[ranks.pair_rank] = fs_id[ranks.ost_server[ranks.pair_ost]]
    cls, kn = ix.client_class[ranks.node], ix.client_cnet[ranks.node]
    nnet, ncnet = len(ix.nets), len(ix.client_nets)
    for m, name in enumerate(ix.servers):
        if role.get(name, ("", ""))[0] != "mds":
            continue
        mine = rank_fs == fs_id[m]
        c = int(carrier[m])
        if c < 0:
            out |= mine  # the MDS is lost (``carriers`` loses its file system's servers too)
            continue
        k = np.maximum(cls, 0) * nnet + ix.server_net[c]
        there = (cls >= 0) & (csh.first[k + 1] > csh.first[k])
        g = int(ix.server_group[c])
        k = max(g, 0) * ncnet + np.maximum(kn, 0)
        back = (g >= 0) & (kn >= 0) & (ssh.first[k + 1] > ssh.first[k])
        out |= mine & ~(there & back)
    return out


def _refuse(ix: PlanIndex, ranks: Ranks, nsub: int) -> None:
    """``InputError`` when ``nsub`` subflows are more than lnetgen models."""
    if nsub > MAX_SUBFLOWS:  # counted before they are laid out
        raise ranks.spec.error(
            "ranks",
            f"{nsub:,} (rank, OST, router) subflows under {ix.plan.strategy}: lnetgen models "
            f"at most {MAX_SUBFLOWS:,}",
        )


def check_size(ix: PlanIndex, ranks: Ranks, ops: Sequence[str], fail: Sequence[str]) -> None:
    """Refuse ``ranks`` (``InputError``) if any of ``ops`` would make more subflows than
    lnetgen models, before anything of that size is built: a command predicting writes and
    reads says so at once, not after solving the writes."""
    mask, carrier = fail_state(ix, fail)
    for op in ops:
        _refuse(ix, ranks, _pairs(ix.site, ix, ranks, op, mask, carrier).subflows())


def build(
    site: Site,
    ix: PlanIndex,
    ranks: Ranks,
    fail: Sequence[str],
    fabric_routes: FabricRoutes | None = None,
    storage_routes: FabricRoutes | None = None,
    njob: int | None = None,
    keep_subflows: bool = False,
    classes: Classes | None = None,
) -> _Built:
    """The problem: every resource the subflows cross.  ``njob``: the job's ranks come first,
    the rest are other jobs' (``unknown`` notes only what the job's ranks cross);
    ``keep_subflows``: they are kept (``_Built.subflows``); ``classes``: ``ranks`` are these
    classes (``merged``), counted by their ranks against the limit."""
    rates = site.rates
    op = ranks.spec.op
    mask, carrier = fail_state(ix, fail)
    n = len(ranks.node)
    pf = _pairs(site, ix, ranks, op, mask, carrier)
    p_rank, p_srv, p_ost, p_w = pf.rank, pf.server, pf.ost, pf.weight
    keys, usable, sh, per_pair = pf.keys, pf.usable, pf.shares, pf.per_pair
    _refuse(ix, ranks, pf.subflows(classes))
    whole = (fabric_routes is not None and site.torus is None) or storage_routes is not None
    whole |= site.dragonfly is not None and site.clients.switch is not None
    starts = _slices(p_rank, per_pair, n, whole)
    res = _Resources(njob if njob is not None else n)
    tor = _TorusRows(site, ix.router_coords) if _modelled(site, ix.router_coords) else None
    kept: list[tuple[IntArray, IntArray, FloatArray]] = []
    kinds = _Kinds(site, ix, ranks, op, fabric_routes, storage_routes)
    for part, (lo, hi) in enumerate(zip(starts, [*starts[1:], n], strict=True)):
        a, b = (int(i) for i in np.searchsorted(p_rank, [lo, hi]))
        if len(starts) == 1:
            a, b = 0, len(p_rank)
        owner, row = sh.rows_of(keys[a:b])
        ok = usable[a:b][owner]
        owner, row = owner[ok] + a, row[ok]
        sub_router = sh.router[row]
        sub_w = p_w[owner] * sh.share[row]
        sub_rank = p_rank[owner]
        res.part, res.start, res.width, res.rank, res.w = part, lo, hi - lo, sub_rank, sub_w
        sub_ost = p_ost[owner] if rates.ost is not None else None
        kinds.add(res, sub_rank, sub_router, p_srv[owner], sub_ost)
        if tor is not None:
            tor.add(ranks.node, op, sub_rank, sub_router, sub_w)
        if keep_subflows:
            kept.append((sub_rank, sub_router, sub_w))
    if rates.ost is None:
        res.unknown.add("ost")
    if fabric_routes is None and site.client_fabric and site.torus is None:
        res.unmodelled.add(
            f"the compute fabric {site.client_fabric} beyond the IO nodes' own ports "
            "(OpenSM's routes not simulated)"
        )
    names, caps, use = res.matrix(starts, n)
    subs = None
    if keep_subflows:
        rank, router, w = (np.concatenate([k[i] for k in kept]) for i in range(3))
        subs = Subflows(rank, router, w, ranks.node, op)
    torus = tor.torus() if tor is not None else None
    problem = Problem(n, use, caps, torus)
    return _Built(
        problem, tuple(names), frozenset(res.unknown), subs, classes, pf.stranded,
        tuple(sorted(res.unmodelled)), ranks.node,
    )  # fmt: skip


def _slices(p_rank: IntArray, per_pair: IntArray, n: int, whole: bool) -> list[int]:
    """The first rank of each slice: about :data:`SLICE` subflows each, whole ranks (the
    pairs by rank); one slice for ``whole`` or pairs out of rank order."""
    if whole or n == 0 or int(per_pair.sum()) <= SLICE or (np.diff(p_rank) < 0).any():
        return [0]
    per_rank = np.cumsum(np.bincount(p_rank, weights=per_pair, minlength=n))
    cuts = np.searchsorted(per_rank, np.arange(SLICE, per_rank[-1], SLICE), side="right")
    return [0, *sorted({int(c) for c in cuts.tolist() if 0 < c < n})]


def _modelled(site: Site, router_coords: IntArray | None) -> bool:
    """Whether the torus is a resource: a torus, its link rates and the routers' positions."""
    t, r = site.torus, site.rates.torus_link
    return t is not None and r is not None and router_coords is not None


class _Kinds:
    """The kinds of resources a slice of subflows crosses, handed to ``_Resources.add``."""

    def __init__(
        self,
        site: Site,
        ix: PlanIndex,
        ranks: Ranks,
        op: str,
        fabric_routes: FabricRoutes | None,
        storage_routes: FabricRoutes | None,
    ) -> None:
        self.site, self.ix, self.ranks, self.op = site, ix, ranks, op
        self.fabric_routes, self.storage_routes = fabric_routes, storage_routes
        nodes, node_ix = np.unique(ranks.node, return_inverse=True)
        names_of = ix.site.clients.names
        self.node_labels = [names_of[i] for i in nodes.tolist()]
        self.node_ix = node_ix.reshape(-1)
        self.leaves = sorted(set(ix.router_leaf) | set(ix.server_leaf))
        leaf_id = {lab: k for k, lab in enumerate(self.leaves)}
        self.ucap = uplink_caps(site, self.leaves)
        self.has_up = np.asarray([leaf_uplinks(site, lab) > 0 for lab in self.leaves], dtype=bool)
        self.router_leaf = np.asarray([leaf_id[lab] for lab in ix.router_leaf], dtype=np.int64)
        self.server_leaf = np.asarray([leaf_id[lab] for lab in ix.server_leaf], dtype=np.int64)
        self.router_ports = port_caps(site, ix.routers)
        self.server_ports = port_caps(site, ix.servers)

    def rate(self, kind: str) -> float:
        r = self.site.rates.get(RATE_OF[kind])
        return r.mb_s if r is not None else np.inf

    def uplink_rate(self, switch: str) -> float:
        r = self.site.switch_rate("uplink", switch)
        return r.mb_s if r is not None else np.inf

    def add(
        self,
        res: _Resources,
        sub_rank: IntArray,
        sub_router: IntArray,
        sub_srv: IntArray,
        sub_ost: IntArray | None,
    ) -> None:
        site, ix, ranks, op = self.site, self.ix, self.ranks, self.op
        R, S = len(ix.routers), len(ix.servers)
        res.add(
            "injection",
            self.node_labels,
            np.full(len(self.node_labels), self.rate("injection")),
            self.node_ix[sub_rank],
        )
        if self.fabric_routes is not None and site.torus is None:
            fabric_links(ix, ranks, op, self.fabric_routes, sub_rank, sub_router, res.add,
                         self.rate("fabric link"))  # fmt: skip
        elif site.client_fabric and site.torus is None:
            # without OpenSM's routes: the IO node's own port, which every route ends on
            io_ports(ix, op, sub_router, res.add, self.rate("fabric link"))
        if site.dragonfly is not None and site.clients.switch is not None:
            dragonfly_links(ix, ranks, op, sub_rank, sub_router, res.add, self.rate)
        res.add("router", list(ix.routers), np.full(R, self.rate("router")), sub_router)
        res.add("router port", list(ix.routers), self.router_ports, sub_router)
        r_leaf = self.router_leaf[sub_router]
        s_leaf = self.server_leaf[sub_srv]
        cross = r_leaf != s_leaf
        if self.storage_routes is not None:
            # crossings OpenSM routes inside one switch take their own spine links instead
            cross &= ~spine_links(ix, op, self.storage_routes, sub_router, sub_srv, res.add,
                                  self.uplink_rate)  # fmt: skip
        up_leaf = r_leaf if op == "write" else s_leaf
        down_leaf = s_leaf if op == "write" else r_leaf
        # a leaf without uplinks: no cable out of it is known, so the crossing is not modelled
        has_up = self.has_up
        job = res.rank < res.njob
        for side in (up_leaf, down_leaf):
            for j in np.unique(side[cross & job & ~has_up[side]]).tolist():
                res.unmodelled.add(
                    f"the uplinks of {self.leaves[j]}: none in the inventory, and traffic "
                    "crosses to another switch or leaf module"
                )
        res.add("leaf uplinks", self.leaves, self.ucap,
                np.where(cross & has_up[up_leaf], up_leaf, -1))  # fmt: skip
        res.add("leaf downlinks", self.leaves, self.ucap,
                np.where(cross & has_up[down_leaf], down_leaf, -1))  # fmt: skip
        res.add("server port", list(ix.servers), self.server_ports, sub_srv)
        res.add("oss", list(ix.servers), np.full(S, self.rate("oss")), sub_srv)
        if sub_ost is not None:
            osts = list(ranks.ost_label)
            res.add("ost", osts, np.full(len(osts), self.rate("ost")), sub_ost)


class _TorusRows:
    """The torus entries of the slices laid out so far: per rank, the share it sends over
    each pair of chips (client's, router's), its subflows' shares summed in their order."""

    def __init__(self, site: Site, router_coords: IntArray | None) -> None:
        t = site.torus
        assert t is not None and site.rates.torus_link is not None and router_coords is not None
        self.dims, self.routing = t.dims, t.routing
        self.chips = t.dims[0] * t.dims[1] * t.dims[2]
        self.cap = np.empty((*t.dims, 6))
        for k, r in enumerate(site.rates.torus_link):
            self.cap[..., k] = r.mb_s
        coords = site.clients.coords.T.astype(np.int64)
        self.client_chip = np.asarray(np.ravel_multi_index(coords, t.dims), dtype=np.int64)
        rc = router_coords.T.astype(np.int64)
        self.router_chip = np.asarray(np.ravel_multi_index(rc, t.dims), dtype=np.int64)
        self.parts: list[tuple[IntArray, IntArray, FloatArray]] = []

    def add(self, node: IntArray, op: str, rank: IntArray, router: IntArray, w: FloatArray) -> None:
        key = self.client_chip[node][rank]
        r = self.router_chip[router]
        if op == "write":
            key *= self.chips
        else:
            r *= self.chips
        key += r
        del r
        order = np.lexsort((key, rank))  # stable: a pair's subflows in their order
        rk, kk = rank[order], key[order]
        new: BoolArray = np.ones(len(order), dtype=bool)
        new[1:] = (rk[1:] != rk[:-1]) | (kk[1:] != kk[:-1])
        total = np.bincount(np.cumsum(new) - 1, weights=w[order], minlength=int(new.sum()))
        self.parts.append((rk[new], kk[new], np.asarray(total, dtype=np.float64)))

    def torus(self) -> Torus:
        rank, key, w = (np.concatenate([p[i] for p in self.parts]) for i in range(3))
        self.parts.clear()
        return Torus.of_entries(self.dims, self.routing, rank, key, w, self.cap)


def torus_of(site: Site, router_coords: IntArray | None, subs: Subflows) -> Torus | None:
    """The torus part of the problem: every subflow's dimension-order path between its
    client's chip and its router's (``router_coords``); None without a modelled torus."""
    if not _modelled(site, router_coords):
        return None
    rows = _TorusRows(site, router_coords)
    rows.add(subs.node, subs.op, subs.rank, subs.router, subs.w)
    return rows.torus()
