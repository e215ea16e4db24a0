"""Backup groups for the ``groups`` strategy, chosen as an optimisation (``backup: balanced``).

When every router of a group is down (its leaf module or TOR switch failed, or the group's own
routers), the group's clients fall back to its backup group's routers at ``backup_priority``:
the backup's routers then carry their own group's load and the failed group's.  The load of a
group is the bulk flows of its servers (one per OST, as ``analyze`` counts them; MDS carry
none); per router it is that load over the group's routers.

For each storage fabric and file system the groups are given backups by an assignment that

1. never pairs two groups on one leaf module / TOR switch (one failure must not take a group
   and its backup), nor groups of different fabrics (the backup's routers could not reach the
   servers) or different file systems;
2. makes every group the backup of at most one group when the counts allow it (otherwise of
   as few as they allow: a copy count ``k`` is raised until an assignment exists);
3. minimises the worst per-router load of a backup group carrying one failed group,
   ``(load(g) + load(h)) / routers(h)`` -- a bottleneck assignment, found by bisecting over the
   candidate values with ``scipy.optimize.linear_sum_assignment`` as the feasibility test;
4. among those, puts as few backups as possible on the group's own switch (a director
   switch's failure then takes no group with its backup), then prefers a backup of the same
   role (MDS for MDS, OSS for OSS), then the lowest total load, then the old ``next`` pairing
   (the nearest following group in plan order).

A group whose servers belong to several file systems (one MDS group for all of them, as on
Spider) is matched with the groups of the first of those file systems by name.

Each group appears in a single assignment row, so a failed module hands each of its groups to
a different backup group; with (2) no backup group receives two failed groups from one
failure.  A group whose fabric and file system have no group on another module keeps no
backup (``why`` says so).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from lnetgen.strategies.base import NetSpec

FloatArray = npt.NDArray[np.float64]

#: The assignment's objectives, most important first: no forbidden pair, no load above the
#: bottleneck, no backup on the group's own switch, no extra copy of a backup group, the same
#: role; then the load and the plan distance.  ``_weights`` makes each level outweigh the sum of
#: every lower one over all rows, so the order is strict.


def _weights(n: int, top_value: float, copies: int) -> tuple[float, float, float, float, float]:
    """(role, copy, switch, above, forbidden) weights for ``n`` rows whose load and distance
    terms stay below ``top_value`` each."""
    k = n + 1
    low = top_value
    role = k * low
    copy = k * (low + role)
    switch = k * (low + role + copy * copies)
    above = k * (low + role + copy * copies + switch)
    forbidden = k * (low + role + copy * copies + switch + above)
    return role, copy, switch, above, forbidden


def group_load(spec: NetSpec) -> float:
    """Bulk flows of a group's servers: one per OST (MDS none)."""
    return float(sum(len(s.osts) for s in spec.servers))


def assign_backups(specs: Sequence[NetSpec], fabric_of: dict[str, str]) -> list[int | None]:
    """For each spec (a group), the index of its backup group in ``specs``, or None.

    ``fabric_of`` maps switch names to fabric names."""
    out: list[int | None] = [None] * len(specs)
    classes: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, spec in enumerate(specs):
        if spec.module is not None:
            # a group serving several file systems (one MDS group for all, as on Spider)
            # joins the first of them by name
            fs = spec.fs or min((s.fs for s in spec.servers), default="")
            classes[(fabric_of[spec.module[0]], fs)].append(i)
    for members in classes.values():
        for i, j in _assign(specs, members).items():
            out[i] = j
    return out


def _assign(specs: Sequence[NetSpec], members: list[int]) -> dict[int, int]:
    """Backups within one (fabric, file system) class: plan index -> plan index."""
    n = len(members)
    grp = [specs[i] for i in members]
    load = np.array([group_load(s) for s in grp])
    size = np.array([max(len(s.routers), 1) for s in grp], dtype=np.float64)
    module = [s.module or ("", "") for s in grp]
    role = [s.servers[0].role if s.servers else "" for s in grp]
    allowed = np.array([[module[a] != module[b] for b in range(n)] for a in range(n)])
    # as few backups on the group's own switch as possible (a director switch's failure then
    # takes no group with its backup)
    same_switch = np.array([[module[a][0] == module[b][0] for b in range(n)] for a in range(n)])
    rows = np.nonzero(allowed.any(axis=1))[0]
    if not len(rows):
        return {}
    value = (load[:, None] + load[None, :]) / size[None, :]  # value[g, h]: h carrying g
    mismatch = np.array([[role[a] != role[b] for b in range(n)] for a in range(n)], dtype=float)
    distance = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n  # the old ``next`` order
    low = value + distance * (1e-3 / (n * n))
    for copies in range(1, len(rows) + 1):
        w_role, w_copy, w_switch, w_above, w_forbidden = _weights(
            len(rows), float(low.max()) + 1.0, copies
        )
        base = w_switch * same_switch + w_role * mismatch + low
        cols = np.repeat(np.arange(n), copies)
        extra = np.tile(np.arange(copies), n) * w_copy
        ok = allowed[np.ix_(rows, cols)]
        if not _feasible(ok):
            continue
        vals = value[np.ix_(rows, cols)]
        cut = _bottleneck(ok, vals)
        cost = base[np.ix_(rows, cols)] + extra[None, :]
        cost = np.where(vals > cut + 1e-9, cost + w_above, cost)
        cost = np.where(ok, cost, w_forbidden)
        r, c = linear_sum_assignment(cost)
        return {members[int(rows[a])]: members[int(cols[b])] for a, b in zip(r, c, strict=True)}
    return {}  # unreachable: with len(rows) copies every row has its own allowed column


def _feasible(ok: npt.NDArray[np.bool_]) -> bool:
    """Whether every row can get a distinct allowed column."""
    if ok.shape[0] > ok.shape[1]:
        return False
    r, c = linear_sum_assignment(np.where(ok, 0.0, 1.0))
    return bool(ok[r, c].all())


def _bottleneck(ok: npt.NDArray[np.bool_], vals: FloatArray) -> float:
    """The least ``t`` such that every row gets a distinct allowed column of value <= t."""
    cands = np.unique(vals[ok])
    lo, hi = 0, len(cands) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _feasible(ok & (vals <= cands[mid] + 1e-9)):
            hi = mid
        else:
            lo = mid + 1
    return float(cands[lo])
