"""How to stripe a shared file or a job's files on a file system of a routed site.

* **Stripe count** (seed 001 §IV): a multiple of the OSTs behind one LNet group, so that every
  group's routers carry an equal share; the largest such multiple within the file system and
  the stripe limit (:func:`stripe_limit`).  When one group has more OSTs than the limit no
  multiple fits: the stripe count is the limit, and no pool is made.
* **Pools** when the file system has more OSTs than the limit (seed 001: SCRATCH's 1,440 OSTs
  in ten pools of 144): whole groups per pool, in group order, as ``lctl pool_new`` /
  ``lctl pool_add`` lines (run on the MGS; ``OST[start-end]`` ranges are hexadecimal, as
  ``lctl`` reads them) and one ``lfs setstripe -p`` per pool.
* **A job's OSTs** (seed 004): the groups nearest the job's nodes (mean torus hops to each
  group's routers), filled to the stripe count, as ``lfs setstripe -c K -o LIST``.

The advice is judged by the throughput model: a shared file per pool (or one over the job's
OSTs) written by the same ranks on the same nodes, against Lustre's default layout (stripe
count 1: the whole file on one OST).  It is given -- ``commands`` -- only when that judgement
shows a gain: both layouts predicted with the OST rate known (the layouts differ in the OSTs
they use; without it the default layout's figure is a bound set by something else) and the
advice predicting more.  Otherwise ``no_advice`` says why and ``commands`` is empty.
"""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass, replace

import numpy as np

from lnetgen.advise.seeds import seeds_of
from lnetgen.model import Site
from lnetgen.place.hops import net_hops
from lnetgen.plan import Plan
from lnetgen.target import EA_INODE_SINCE, show
from lnetgen.throughput import Prediction, WorkloadSpec, predict
from lnetgen.traffic import PlanIndex, index_plan, input_error

#: Lustre's stripe limits (lustre-release include/uapi/linux/lustre/lustre_user.h):
#: ``LOV_MAX_STRIPE_COUNT`` since 2.2 (LU-80), reached only where the MDT stores extended
#: attributes larger than a block -- ZFS, or ldiskfs with ``ea_inode`` -- and
#: ``LOV_MAX_STRIPE_COUNT_OLD``, what a layout in one 4 KiB block holds (lod_qos.c
#: ``lod_get_stripe_count`` clamps a wider request to what the MDT's xattr size holds).
MAX_STRIPE = 2000
MAX_STRIPE_OLD = 160


def stripe_limit(site: Site) -> tuple[int, str]:
    """The stripe limit assumed without ``--max-stripe``, and what it rests on.  The inventory
    does not say how the MDT was formatted, so the release of the servers decides: 2000 on
    2.13 or later (mkfs.lustre's ``ea_inode`` default), else 160 (the limit every MDT
    allows)."""
    v = site.lustre.of("server")
    if v is not None and v >= EA_INODE_SINCE:
        return MAX_STRIPE, (
            f"assumed: LOV_MAX_STRIPE_COUNT, the servers run {show(v)} "
            "(an MDT formatted by 2.13 or later, or on ZFS); 160 on an older ldiskfs MDT "
            "(--max-stripe)"
        )
    why = (
        "the release is not stated"
        if v is None
        else f"the servers run {show(v)}, before mkfs.lustre's ea_inode default"
    )
    return MAX_STRIPE_OLD, (
        f"assumed: LOV_MAX_STRIPE_COUNT_OLD, {why}; 2000 with a ZFS MDT or an ldiskfs MDT "
        "with ea_inode (--max-stripe 2000)"
    )


@dataclass(frozen=True)
class Pool:
    name: str
    osts: tuple[int, ...]
    nets: tuple[str, ...]


@dataclass(frozen=True)
class Judged:
    seed: int
    advised_mb_s: float | None
    default_mb_s: float | None


@dataclass(frozen=True)
class StripeAdvice:
    site: str
    strategy: str
    fs: str
    osts: int  # OSTs of the file system
    group_osts: int  # OSTs behind one storage net (the multiple)
    max_stripe: int
    limit_source: str  # "--max-stripe", or what the assumed limit rests on
    multiple_fits: bool  # a multiple of group_osts is within the limit
    stripe_count: int
    pools: tuple[Pool, ...]
    job: str  # the job's node set, or ''
    job_osts: tuple[int, ...]
    commands: tuple[str, ...]
    ranks: int
    advised: Prediction | None
    default: Prediction | None
    notes: tuple[str, ...]
    #: why no advice is given ("" when ``commands`` holds it)
    no_advice: str = ""
    #: the aggregate of the advice and of the default layout on each seed of the ranks' draw
    #: (``lnetgen.advise.seeds``); ``advised``/``default`` are the first seed's predictions
    judged: tuple[Judged, ...] = ()


def ost_list(osts: tuple[int, ...]) -> str:
    """``1,2-4,7`` (decimal, as ``lfs setstripe -o`` takes it)."""
    out: list[str] = []
    for lo, hi in _runs(osts):
        out.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return ",".join(out)


def _runs(osts: tuple[int, ...]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for o in sorted(osts):
        if runs and o == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], o)
        else:
            runs.append((o, o))
    return runs


def _groups(site: Site, ix: PlanIndex, fs: str) -> list[tuple[str, tuple[int, ...]]]:
    """(storage net, its OSTs of ``fs``) in order of their first OST."""
    by_net: dict[str, list[int]] = defaultdict(list)
    by_name = {s.name: s for s in site.servers}
    for sid, name in enumerate(ix.servers):
        srv = by_name[name]
        if srv.fs == fs and srv.role == "oss":
            by_net[ix.nets[int(ix.server_net[sid])]].extend(srv.osts)
    groups = [(net, tuple(sorted(o))) for net, o in by_net.items() if o]
    return sorted(groups, key=lambda g: g[1][0])


def advise_stripes(
    site: Site,
    plan: Plan,
    fs: str | None = None,
    job: list[int] | None = None,
    job_label: str = "",
    max_stripe: int | None = None,
    path: str = "FILE",
    index: PlanIndex | None = None,
) -> StripeAdvice:
    """Stripe advice for ``fs`` (see the module docstring); ``job``: client indices of the
    job; ``max_stripe`` None: :func:`stripe_limit`.  Raises ``InputError`` (E-USAGE) for an
    unknown file system, one without OSTs, a missing ``fs`` where several have OSTs, or a
    stripe limit below 1 or above ``MAX_STRIPE`` (no MDT stores a wider layout)."""
    ix = index or index_plan(site, plan)
    with_osts = sorted({s.fs for s in site.servers if s.role == "oss" and s.osts})
    if fs is None:
        if len(with_osts) != 1:
            raise input_error(
                "E-USAGE",
                f"{site.name} has file systems {', '.join(with_osts)}: name one with --fs",
                "--fs",
            )
        fs = with_osts[0]
    if fs not in with_osts:
        raise input_error(
            "E-USAGE",
            f"no file system {fs!r} with OSTs (have: {', '.join(with_osts)})",
            "--fs",
        )
    if max_stripe is None:
        max_stripe, limit_source = stripe_limit(site)
    else:
        limit_source = "--max-stripe"
    if not 1 <= max_stripe <= MAX_STRIPE:
        raise input_error(
            "E-USAGE",
            f"must be 1 to {MAX_STRIPE} (LOV_MAX_STRIPE_COUNT), not {max_stripe}",
            "--max-stripe",
        )
    groups = _groups(site, ix, fs)
    n = sum(len(o) for _, o in groups)
    sizes = Counter(len(o) for _, o in groups)
    g = sizes.most_common(1)[0][0]
    notes: list[str] = []
    if len(sizes) > 1:
        notes.append(
            "groups differ in size ("
            + ", ".join(f"{k} OSTs: {v}" for k, v in sorted(sizes.items()))
            + f"); the multiple is the most common, {g}"
        )
    limit = min(max_stripe, n)
    fits = g <= limit
    k = (limit // g) * g if fits else limit
    per_pool = k // g if fits else 0
    if n > max_stripe and len(sizes) == 1 and fits:
        # as few pools as the limit allows that take the groups in equal shares (seed 001:
        # 120 groups of 12 OSTs under a limit of 160 -> 10 pools of 144, not 9 of 156 + 36)
        for npools in range(-(-n // max_stripe), len(groups) + 1):
            if len(groups) % npools == 0:
                per_pool = len(groups) // npools
                k = per_pool * g
                break
    pools: list[Pool] = []
    commands: list[str] = []
    if n > max_stripe and not job and fits and max(sizes) <= max_stripe:
        pools = _pools(groups, per_pool, max_stripe)
        if len({len(p.nets) for p in pools}) > 1:
            notes.append(
                f"the pools hold {', '.join(str(len(p.nets)) for p in pools)} group(s): a "
                "pool with fewer gets a smaller share"
            )
        for p in pools:
            commands.append(f"lctl pool_new {fs}.{p.name}")
            ranges = " ".join(f"{fs}-OST[{lo:04x}-{hi:04x}]" for lo, hi in _runs(p.osts))
            commands.append(f"lctl pool_add {fs}.{p.name} {ranges}")
        for p in pools:
            commands.append(
                f"lfs setstripe -p {p.name} -c {len(p.osts)} {shlex.quote(f'{path}.{p.name}')}"
            )
    elif n > max_stripe and not job and not fits:
        notes.append(f"no pool of whole groups fits under the limit {max_stripe}")
    job_osts: tuple[int, ...] = ()
    no_advice = ""
    chosen: Prediction | None = None
    if job:
        job_osts, no_advice, chosen = _job_osts(site, plan, ix, fs, job, job_label, groups, k, g)
        k = len(job_osts)
        commands.append(
            f"lfs setstripe -c {len(job_osts)} -o {ost_list(job_osts)} {shlex.quote(path)}"
        )
        if n > max_stripe:
            notes.append("the job's OSTs are listed with -o; no pool is needed for them")
    elif not pools:
        commands.append(f"lfs setstripe -c {k} {shlex.quote(path)}")
    assert k <= max_stripe and all(len(p.osts) <= max_stripe for p in pools)
    judged, ranks = _judge(site, plan, ix, fs, job, job_label, pools, k, groups, job_osts, chosen)
    no_advice = no_advice or _verdict(judged)
    return StripeAdvice(
        site.name,
        plan.strategy,
        fs,
        n,
        g,
        max_stripe,
        limit_source,
        fits,
        k,
        tuple(pools),
        job_label,
        job_osts,
        () if no_advice else tuple(commands),
        ranks,
        judged[0][1],
        judged[0][2],
        tuple(notes),
        no_advice,
        tuple(Judged(seed, a.aggregate_mb_s, d.aggregate_mb_s) for seed, a, d in judged),
    )


def _pools(groups: list[tuple[str, tuple[int, ...]]], per_pool: int, limit: int) -> list[Pool]:
    """Consecutive whole groups, ``per_pool`` to a pool and never more OSTs than ``limit``
    (groups of unequal size may close a pool early)."""
    chunks: list[list[tuple[str, tuple[int, ...]]]] = []
    for grp in groups:
        last = chunks[-1] if chunks else None
        if (
            last is not None
            and len(last) < per_pool
            and sum(len(o) for _, o in last) + len(grp[1]) <= limit
        ):
            last.append(grp)
        else:
            chunks.append([grp])
    return [
        Pool(f"g{i + 1:02d}", tuple(o for _, os_ in c for o in os_), tuple(net for net, _ in c))
        for i, c in enumerate(chunks)
    ]


def needs(*predictions: Prediction | None) -> str:
    """``no advice: needs ...``: the OST rate, missing on any of ``predictions``' paths, or a
    figure the model could not give; "" when every figure is known."""
    for p in predictions:
        if p is None or "ost" in p.unknown:
            return "needs the ost rate (the site gives none)"
    for p in predictions:
        if p is not None and p.aggregate_mb_s is None:
            return "needs the rates of " + ", ".join(p.unknown)
    return ""


def _verdict(judged: list[tuple[int, Prediction, Prediction]]) -> str:
    """Why the advice is not given ("" when the model shows it helps on every seed)."""
    for seed, advised, default in judged:
        missing = needs(advised, default)
        if missing:
            return missing
        assert advised.aggregate_mb_s is not None and default.aggregate_mb_s is not None
        if advised.aggregate_mb_s <= default.aggregate_mb_s:
            on = f" on seed {seed}" if len(judged) > 1 else ""
            return f"the model predicts no gain over Lustre's default layout{on}"
    return ""


#: A job's stripe is the narrowest whose predicted bandwidth is within this fraction of the
#: best width tried: wider only spreads the job over more groups for nothing.
GOOD_ENOUGH = 0.95


def _job_osts(
    site: Site,
    plan: Plan,
    ix: PlanIndex,
    fs: str,
    job: list[int],
    job_label: str,
    groups: list[tuple[str, tuple[int, ...]]],
    k: int,
    g: int,
) -> tuple[tuple[int, ...], str, Prediction]:
    """The OSTs of the groups nearest the job (mean hops to each group's routers), as many
    groups as pays: 1, 2, 4, ... up to the stripe count are predicted and the narrowest within
    ``GOOD_ENOUGH`` of the best is kept.  Without a figure for every width no width is
    chosen: the nearest group's OSTs and why (``needs``).  Last, the prediction of the OSTs
    returned (``_job_spec``), which :func:`_judge` does not make again."""
    hops = net_hops(ix)[np.asarray(job, dtype=np.int64)].mean(axis=0)
    order = sorted(range(len(groups)), key=lambda i: (hops[ix.nets.index(groups[i][0])], i))
    most = max(k // g, 1)
    widths = sorted({min(2**e, most) for e in range(most.bit_length() + 1)})
    tried: list[tuple[float, tuple[int, ...], Prediction]] = []
    for w in widths:
        osts = tuple(sorted(o for i in order[:w] for o in groups[i][1]))[:k]
        p = predict(site, plan, _job_spec(fs, job, job_label, osts), index=ix)
        missing = needs(p)
        if missing:
            why = f"{missing} to choose the job's width"
            return (osts, why, p) if not tried else (tried[0][1], why, tried[0][2])
        assert p.aggregate_mb_s is not None
        tried.append((p.aggregate_mb_s, osts, p))
    best = max(t[0] for t in tried)
    _, osts, p = next(t for t in tried if t[0] >= GOOD_ENOUGH * best)
    return osts, "", p


def _job_spec(fs: str, job: list[int], job_label: str, osts: tuple[int, ...]) -> WorkloadSpec:
    """One shared file of ``fs`` striped over ``osts``, written by the job's ranks."""
    return WorkloadSpec(
        name="advice",
        pattern="shared-file",
        filesystems=(fs,),
        ranks=len(job),
        nodes=job_label,
        osts=ost_list(osts),
        stripe_count=0,
    )


def _judge(
    site: Site,
    plan: Plan,
    ix: PlanIndex,
    fs: str,
    job: list[int] | None,
    job_label: str,
    pools: list[Pool],
    k: int,
    groups: list[tuple[str, tuple[int, ...]]],
    job_osts: tuple[int, ...],
    chosen: Prediction | None = None,
) -> tuple[list[tuple[int, Prediction, Prediction]], int]:
    """The advice and Lustre's default layout, predicted for the same ranks: per seed of the
    ranks' draw (``seeds_of``; the job's own nodes are one), the first seed's first.  Once a
    figure needs a rate the site lacks, the other seeds are not predicted.  ``chosen``: the
    prediction :func:`_job_osts` made of the job's OSTs, taken instead of predicting it
    again."""
    nodes = job_label if job else "random"
    ranks = len(job) if job else min(len(site.clients), sum(len(o) for _, o in groups))
    base = WorkloadSpec(
        name="advice", pattern="shared-file", filesystems=(fs,), ranks=ranks, nodes=nodes
    )
    if job:
        spec = replace(base, osts=ost_list(job_osts), stripe_count=0)
    elif pools:
        spec = replace(base, files=len(pools), stripe_count=0)
    else:
        first = tuple(o for _, os_ in groups for o in os_)[:k]
        spec = replace(base, osts=ost_list(first), stripe_count=0)
    default = replace(base, stripe_count=1)
    known = _job_spec(fs, job, job_label, job_osts) if job and chosen is not None else None
    out: list[tuple[int, Prediction, Prediction]] = []
    for seed in seeds_of(base):
        each = replace(spec, seed=seed)
        a = chosen if chosen is not None and each == known else predict(site, plan, each, index=ix)
        d = predict(site, plan, replace(default, seed=seed), index=ix)
        out.append((seed, a, d))
        if needs(a, d):
            break
    return out, ranks
