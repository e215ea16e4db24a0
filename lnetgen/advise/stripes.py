"""How to stripe a shared file or a job's files on a file system of a routed site.

* **Stripe count** (seed 001 §IV): a multiple of the OSTs behind one LNet group, so that every
  group's routers carry an equal share; the largest such multiple within the file system and
  the stripe limit (``LOV_MAX_STRIPE_COUNT``: 2000 in current Lustre, 160 where the MDT lacks
  large extended attributes, as on Blue Waters).
* **Pools** when the file system has more OSTs than the limit (seed 001: SCRATCH's 1,440 OSTs
  in ten pools of 144): whole groups per pool, in group order, as ``lctl pool_new`` /
  ``lctl pool_add`` lines (run on the MGS; ``OST[start-end]`` ranges are hexadecimal, as
  ``lctl`` reads them) and one ``lfs setstripe -p`` per pool.
* **A job's OSTs** (seed 004): the groups nearest the job's nodes (mean torus hops to each
  group's routers), filled to the stripe count, as ``lfs setstripe -c K -o LIST``.

The advice is judged by the throughput model: a shared file per pool (or one over the job's
OSTs) written by the same ranks on the same nodes, against Lustre's default layout (stripe
count 1: the whole file on one OST).
"""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from lnetgen.model import Site
from lnetgen.place.hops import net_hops
from lnetgen.plan import Plan
from lnetgen.throughput import Prediction, WorkloadSpec, predict
from lnetgen.traffic import PlanIndex, index_plan, input_error

#: Lustre's stripe limit (include/uapi/linux/lustre/lustre_user.h LOV_MAX_STRIPE_COUNT) and the
#: older one (LOV_MAX_STRIPE_COUNT_OLD, an MDT without large extended attributes).
MAX_STRIPE = 2000
MAX_STRIPE_OLD = 160


@dataclass(frozen=True)
class Pool:
    name: str
    osts: tuple[int, ...]
    nets: tuple[str, ...]


@dataclass(frozen=True)
class StripeAdvice:
    site: str
    strategy: str
    fs: str
    osts: int  # OSTs of the file system
    group_osts: int  # OSTs behind one storage net (the multiple)
    max_stripe: int
    stripe_count: int
    pools: tuple[Pool, ...]
    job: str  # the job's node set, or ''
    job_osts: tuple[int, ...]
    commands: tuple[str, ...]
    ranks: int
    advised: Prediction | None
    default: Prediction | None
    notes: tuple[str, ...]


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
    max_stripe: int = MAX_STRIPE,
    path: str = "FILE",
    index: PlanIndex | None = None,
) -> StripeAdvice:
    """Stripe advice for ``fs`` (see the module docstring); ``job``: client indices of the
    job.  Raises ``InputError`` (E-USAGE) for an unknown file system, one without OSTs, a
    missing ``fs`` where several have OSTs, or a stripe limit below 1."""
    ix = index or index_plan(site, plan)
    with_osts = sorted({s.fs for s in site.servers if s.role == "oss" and s.osts})
    if fs is None:
        if len(with_osts) != 1:
            raise input_error(
                "E-USAGE",
                f"{site.name} has file systems {', '.join(with_osts)}: name one with --fs",
            )
        fs = with_osts[0]
    if fs not in with_osts:
        raise input_error(
            "E-USAGE", f"no file system {fs!r} with OSTs (have: {', '.join(with_osts)})"
        )
    if max_stripe < 1:
        raise input_error("E-USAGE", f"--max-stripe must be at least 1, not {max_stripe}")
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
    k = (limit // g) * g if g <= limit else limit
    if g > limit:
        notes.append(f"a group has {g} OSTs, more than the limit {limit}: no multiple fits")
    per_pool = max(k // g, 1)
    if n > max_stripe and len(sizes) == 1 and g <= limit:
        # as few pools as the limit allows that take the groups in equal shares (seed 001:
        # 120 groups of 12 OSTs under a limit of 160 -> 10 pools of 144, not 9 of 156 + 36)
        for npools in range(-(-n // max_stripe), len(groups) + 1):
            if len(groups) % npools == 0:
                per_pool = len(groups) // npools
                k = per_pool * g
                break
    pools: list[Pool] = []
    commands: list[str] = []
    if n > max_stripe and not job:
        for i in range(0, len(groups), per_pool):
            chunk = groups[i : i + per_pool]
            name = f"g{len(pools) + 1:02d}"
            osts = tuple(o for _, os_ in chunk for o in os_)
            pools.append(Pool(name, osts, tuple(net for net, _ in chunk)))
        if len(groups) % per_pool:
            notes.append(
                f"the last pool has {len(groups) % per_pool} group(s), not {per_pool}: its "
                "files get a smaller share"
            )
        for p in pools:
            commands.append(f"lctl pool_new {fs}.{p.name}")
            ranges = " ".join(f"{fs}-OST[{lo:04x}-{hi:04x}]" for lo, hi in _runs(p.osts))
            commands.append(f"lctl pool_add {fs}.{p.name} {ranges}")
        for p in pools:
            commands.append(
                f"lfs setstripe -p {p.name} -c {len(p.osts)} {shlex.quote(f'{path}.{p.name}')}"
            )
    job_osts: tuple[int, ...] = ()
    if job:
        job_osts = _job_osts(site, plan, ix, fs, job, job_label, groups, k, g)
        k = len(job_osts)
        commands.append(
            f"lfs setstripe -c {len(job_osts)} -o {ost_list(job_osts)} {shlex.quote(path)}"
        )
        if n > max_stripe:
            notes.append("the job's OSTs are listed with -o; no pool is needed for them")
    elif not pools:
        commands.append(f"lfs setstripe -c {k} {shlex.quote(path)}")
    advised, default, ranks = _judge(site, plan, ix, fs, job, job_label, pools, k, groups, job_osts)
    return StripeAdvice(
        site.name,
        plan.strategy,
        fs,
        n,
        g,
        max_stripe,
        k,
        tuple(pools),
        job_label,
        job_osts,
        tuple(commands),
        ranks,
        advised,
        default,
        tuple(notes),
    )


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
) -> tuple[int, ...]:
    """The OSTs of the groups nearest the job (mean hops to each group's routers), as many
    groups as pays: 1, 2, 4, ... up to the stripe count are predicted and the narrowest within
    ``GOOD_ENOUGH`` of the best is kept."""
    hops = net_hops(ix)[np.asarray(job, dtype=np.int64)].mean(axis=0)
    order = sorted(range(len(groups)), key=lambda i: (hops[ix.nets.index(groups[i][0])], i))
    most = max(k // g, 1)
    widths = sorted({min(2**e, most) for e in range(most.bit_length() + 1)})
    tried: list[tuple[int, float, tuple[int, ...]]] = []
    for w in widths:
        osts = tuple(sorted(o for i in order[:w] for o in groups[i][1]))[:k]
        spec = WorkloadSpec(
            name="advice",
            pattern="shared-file",
            filesystems=(fs,),
            ranks=len(job),
            nodes=job_label,
            osts=ost_list(osts),
            stripe_count=0,
        )
        p = predict(site, plan, spec, index=ix)
        tried.append((w, p.aggregate_mb_s or 0.0, osts))
    best = max(t[1] for t in tried)
    return next(t[2] for t in tried if t[1] >= GOOD_ENOUGH * best)


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
) -> tuple[Prediction | None, Prediction | None, int]:
    """The advice and Lustre's default layout, predicted for the same ranks."""
    nodes = job_label if job else "random"
    ranks = len(job) if job else min(len(site.clients), sum(len(o) for _, o in groups))
    base = WorkloadSpec(
        name="advice", pattern="shared-file", filesystems=(fs,), ranks=ranks, nodes=nodes
    )
    if job:
        spec = WorkloadSpec(**{**base.__dict__, "osts": ost_list(job_osts), "stripe_count": 0})
    elif pools:
        spec = WorkloadSpec(**{**base.__dict__, "files": len(pools), "stripe_count": 0})
    else:
        first = tuple(o for _, os_ in groups for o in os_)[:k]
        spec = WorkloadSpec(**{**base.__dict__, "osts": ost_list(first), "stripe_count": 0})
    default = WorkloadSpec(**{**base.__dict__, "stripe_count": 1})
    return predict(site, plan, spec, index=ix), predict(site, plan, default, index=ix), ranks
