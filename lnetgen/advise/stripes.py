"""How to stripe a shared file or a job's files on a file system of a routed site.

* **Stripe count** (seed 001 §IV): a multiple of the OSTs behind one LNet group, so that every
  group's routers carry an equal share; the largest such multiple within the file system and
  the stripe limit (:func:`stripe_limit`) -- kept only where the model predicts no less for it
  than for the widest count the limit allows, else that count (``weighed`` holds both figures).
  When one group has more OSTs than the limit no multiple fits: the stripe count is the
  limit, and no pool is made.
* **Pools** when the file system has more OSTs than the limit (seed 001: SCRATCH's 1,440 OSTs
  in ten pools of 144): whole groups per pool, in group order, as ``lctl pool_new`` /
  ``lctl pool_add`` lines (run on the MGS; ``OST[start-end]`` ranges are hexadecimal, as
  ``lctl`` reads them) and one ``lfs setstripe -p`` per pool.  A pool holds fewer OSTs than
  one file may span: where the model predicts more for one file at the single-file count
  than for a file on a pool, ``weighed`` says so with both figures (equal shares per group
  against width), and that a job writing one file should use the plain ``-c K``.
* **A job's OSTs** (seed 004): the groups nearest the job's nodes (mean torus hops to each
  group's routers), as many as pay up to the widest count the limit allows (no pool is made
  for them), as ``lfs setstripe -c K -o LIST`` -- only where the model predicts more for that
  list than for Lustre's own allocation at the same width (the model's default OST choice);
  else the plain ``lfs setstripe -c K`` (``weighed`` gives both figures).

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

from lnetgen.advise.weigh import Predictor, Weighed, compared, needs, weighed
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
    #: the layouts weighed against each other on the way (``lnetgen.advise.weigh``): each
    #: with both figures per seed and why the one kept
    weighed: tuple[Weighed, ...] = ()


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
    base = WorkloadSpec(
        name="advice",
        pattern="shared-file",
        filesystems=(fs,),
        ranks=len(job) if job else min(len(site.clients), n),
        nodes=job_label if job else "random",
    )
    pr = Predictor(site, plan, ix, base, predict)  # looked up here: tests count the calls
    order = tuple(o for _, os_ in groups for o in os_)  # whole groups first, in group order
    found: list[Weighed] = []
    pools: list[Pool] = []
    commands: list[str] = []
    job_osts: tuple[int, ...] = ()
    no_advice = ""
    if job:
        # the widest the limit allows: no pool is made for a job's file (the OSTs are listed)
        job_osts, no_advice, chosen = _job_osts(pr, job, groups, limit, g)
        k = len(job_osts)
        spec = _osts_spec(base, job_osts)
        pr.known(spec, chosen)
        commands.append(f"lfs setstripe -c {k} -o {ost_list(job_osts)} {shlex.quote(path)}")
        if not no_advice:
            plain = replace(base, stripe_count=k)
            w = _listed_or_allocated(pr, spec, plain, k)
            found.append(w)
            if w.kept != _LISTED:
                spec, commands = plain, [f"lfs setstripe -c {k} {shlex.quote(path)}"]
        if n > max_stripe and spec.osts:
            notes.append("the job's OSTs are listed with -o; no pool is needed for them")
    else:
        k = (limit // g) * g if fits else limit
        if fits and k < limit:
            k, w = _multiple_or_widest(pr, order, k, limit, g)
            found.append(w)
        if n > max_stripe and len(sizes) == 1 and fits:
            pools = _pools(groups, _per_pool(n, len(groups), max_stripe), max_stripe)
        elif n > max_stripe and not fits:
            notes.append(f"no pool of whole groups fits under the limit {max_stripe}")
        spec = _osts_spec(base, order[:k])
        if pools:
            commands.extend(_pool_lines(fs, pools, path))
            if len({len(p.nets) for p in pools}) > 1:
                notes.append(
                    f"the pools hold {', '.join(str(len(p.nets)) for p in pools)} group(s): "
                    "a pool with fewer gets a smaller share"
                )
            if len(pools[0].osts) < k:
                found.append(_pool_or_single(pr, pools[0], spec, k))
            k = len(pools[0].osts)  # the pools' stripe count, as their lfs lines give it
            spec = replace(base, files=len(pools), stripe_count=0)
        else:
            commands.append(f"lfs setstripe -c {k} {shlex.quote(path)}")
    assert k <= max_stripe and all(len(p.osts) <= max_stripe for p in pools)
    judged = pr.pair(spec, replace(base, stripe_count=1))
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
        pr.ranks,
        judged[0][1],
        judged[0][2],
        tuple(notes),
        no_advice,
        tuple(Judged(seed, a.aggregate_mb_s, d.aggregate_mb_s) for seed, a, d in judged),
        tuple(found),
    )


def _per_pool(n: int, ngroups: int, max_stripe: int) -> int:
    """Groups per pool: as few pools as the limit allows that take the groups in equal shares
    (seed 001: 120 groups of 12 OSTs under a limit of 160 -> 10 pools of 144, not 9 of 156 +
    36)."""
    for npools in range(-(-n // max_stripe), ngroups + 1):
        if ngroups % npools == 0:
            return ngroups // npools
    return 1  # pragma: no cover - npools == ngroups always divides


def _pool_lines(fs: str, pools: list[Pool], path: str) -> list[str]:
    """``lctl pool_new``/``pool_add`` per pool (run on the MGS), then an ``lfs setstripe -p``
    per pool."""
    out: list[str] = []
    for p in pools:
        out.append(f"lctl pool_new {fs}.{p.name}")
        ranges = " ".join(f"{fs}-OST[{lo:04x}-{hi:04x}]" for lo, hi in _runs(p.osts))
        out.append(f"lctl pool_add {fs}.{p.name} {ranges}")
    for p in pools:
        out.append(f"lfs setstripe -p {p.name} -c {len(p.osts)} {shlex.quote(f'{path}.{p.name}')}")
    return out


def _osts_spec(base: WorkloadSpec, osts: tuple[int, ...]) -> WorkloadSpec:
    """One shared file striped over ``osts``, written by ``base``'s ranks."""
    return replace(base, osts=ost_list(osts), stripe_count=0)


_LISTED = "the OSTs listed (-o)"
_POOL_FILE = "one file on a pool of whole groups"


def _multiple_or_widest(
    pr: Predictor, order: tuple[int, ...], multiple: int, widest: int, g: int
) -> tuple[int, Weighed]:
    """Seed 001's stripe count, a multiple of the OSTs behind a group (``multiple``: every
    group's routers carry an equal share), against the widest count the limit allows.
    Decision: the multiple is kept where the model does not lose by it on any seed -- or
    cannot weigh them (no advice is given then anyway); else the widest, whose extra OSTs
    are worth more than the equal shares."""
    rows = pr.pair(_osts_spec(pr.base, order[:multiple]), _osts_spec(pr.base, order[:widest]))
    diff = compared(rows)
    keep = diff is None or min(diff) >= 0
    why = (
        f"a multiple of {g}: every group's routers carry an equal share, and the model "
        f"predicts no less than for the limit, {widest}"
        if keep
        else f"the model predicts more for the limit than for the multiple of {g}"
    )
    return (multiple if keep else widest), weighed(
        rows, keep, f"-c {multiple}", f"-c {widest}", why
    )


def _pool_or_single(pr: Predictor, pool: Pool, single: WorkloadSpec, k: int) -> Weighed:
    """A file on one pool (its whole groups, fewer OSTs than ``k``) against one file at the
    single-file count ``k`` without a pool.  Decision: the pools stay -- they are for a file
    per pool, each group's routers an equal share and the files together covering the file
    system (that is what is judged against stripe count 1) -- and the trade-off is said with
    both figures: where the model predicts more for one file at ``-c k`` on every seed, a job
    writing one file is told to use ``-c k`` without a pool."""
    rows = pr.pair(_osts_spec(pr.base, pool.osts), single)
    diff = compared(rows)
    wider = diff is not None and max(diff) < 0
    why = (
        f"a job writing one file gets more with lfs setstripe -c {k} and no pool; the pools "
        "are for a file per pool, each group's routers an equal share"
        if wider
        else f"the model predicts no less for a file on a pool than for one at -c {k}"
    )
    return weighed(rows, not wider, _POOL_FILE, f"one file at -c {k}, no pool", why)


def _listed_or_allocated(
    pr: Predictor, listed: WorkloadSpec, allocated: WorkloadSpec, k: int
) -> Weighed:
    """A job's hand-picked OSTs against Lustre's own allocation at the same width (``-c k``,
    the model's default OST choice).  Decision: the list is advised only where it beats the
    allocation on every seed; else the plain ``-c k`` -- the list is more to type and pins
    the file to OSTs that do not pay."""
    rows = pr.pair(listed, allocated)
    diff = compared(rows)
    keep = diff is not None and min(diff) > 0
    why = (
        f"the model predicts more for the OSTs nearest to the job than for Lustre's own "
        f"choice of {k}"
        if keep
        else f"the model predicts no more for the OSTs nearest to the job than for Lustre's "
        f"own choice of {k}"
    )
    return weighed(rows, keep, _LISTED, f"-c {k} (Lustre's allocation)", why)


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
    pr: Predictor,
    job: list[int],
    groups: list[tuple[str, tuple[int, ...]]],
    k: int,
    g: int,
) -> tuple[tuple[int, ...], str, Prediction]:
    """The OSTs of the groups nearest the job (mean hops to each group's routers), as many
    groups as pays: 1, 2, 4, ... up to the stripe count ``k`` (the widest the limit allows)
    are predicted and the narrowest within ``GOOD_ENOUGH`` of the best is kept.  Without a
    figure for every width no width is chosen: the nearest group's OSTs and why (``needs``).
    Last, the prediction of the OSTs returned."""
    ix = pr.ix
    hops = net_hops(ix)[np.asarray(job, dtype=np.int64)].mean(axis=0)
    order = sorted(range(len(groups)), key=lambda i: (hops[ix.nets.index(groups[i][0])], i))
    most = max(k // g, 1)
    widths = sorted({min(2**e, most) for e in range(most.bit_length() + 1)})
    tried: list[tuple[float, tuple[int, ...], Prediction]] = []
    for w in widths:
        osts = tuple(sorted(o for i in order[:w] for o in groups[i][1]))[:k]
        p = pr.predict(_osts_spec(pr.base, osts))
        missing = needs(p)
        if missing:
            why = f"{missing} to choose the job's width"
            return (osts, why, p) if not tried else (tried[0][1], why, tried[0][2])
        assert p.aggregate_mb_s is not None
        tried.append((p.aggregate_mb_s, osts, p))
    best = max(t[0] for t in tried)
    _, osts, p = next(t for t in tried if t[0] >= GOOD_ENOUGH * best)
    return osts, "", p
