"""How the ``groups`` strategy forms the N:M groups of one leaf module / TOR switch.

What an administrator of a Cray N:M site expects, in the order it is decided:

1. **One file system per group.**  A leaf's servers of one role are cut per file system (by
   name) into groups of M, N routers each.  A file system whose count on the leaf is not a
   multiple of M leaves a remainder; each remainder becomes a group of its own file system, and
   the remainders share the routers the ratio gives them (N per M servers): each gets at least
   ``min(N, 2)`` (two keep a group's priority-0 path alive when one router fails) and at least
   one per client net where N allows it, and each further router goes to the remainder with the
   most servers per router (plan order breaks ties), which keeps the worst servers per router
   as low as the count allows.  When the routers are too few for that (Spider's MDS leaf: 4
   routers for the 3 MDS of 3 file systems at "4:3", 6 needed), or when splitting would leave a
   client net with fewer routers than groups on the leaf, the remainders are cut together into
   groups of M as before: such a group mixes file systems, and its ``why`` says so and why.
2. **Every client net in every group.**  Every server must reach every client net through its
   group's priority-0 routers (the coverage guarantee), so a group gets a router on each client
   net whenever the leaf's routers allow it (one per group on that net); a net the leaf cannot
   give to every group goes to the groups first in plan order (the solver names the group that
   lacks it).
3. **Routers close together on the torus.**  Among the routers that keep (2) possible, a group
   starts with the first free router in inventory order and adds, one at a time, the free router
   with the fewest torus hops to those it already holds (inventory order breaks ties), so its
   routers share a chip or an XIO blade where the leaf allows it (seed 001, Blue Waters: "all
   four routers of a group reside on the same XIO service blade").  Without a torus (or a router
   without coordinates) every distance is 0: inventory order.  A group lists its routers in
   inventory order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lnetgen import topology
from lnetgen.model import Router, Server, Site


@dataclass
class Group:
    """One N:M group of a leaf: its servers (one role), how many routers it takes, and a note
    when it mixes file systems."""

    role: str
    servers: list[Server]
    size: int
    mixed: str = ""


def cut_role(
    role: str,
    servers: Sequence[Server],
    ratio: tuple[int, int],
    routers: int,
    nets: int,
    split: bool = True,
) -> list[Group]:
    """Groups of one role on a leaf, ``servers`` sorted by file system and name, their count a
    multiple of M (``ratio`` is N:M); ``routers`` (N per M servers) are the role's share of the
    leaf's and ``nets`` the client nets each group should reach.  Rule 1 of the module
    docstring; ``split=False``: the remainders mixed (a split would starve a client net)."""
    n, m = ratio
    by_fs: dict[str, list[Server]] = {}
    for s in servers:
        by_fs.setdefault(s.fs, []).append(s)
    full: list[Group] = []
    rest: list[list[Server]] = []
    for members in by_fs.values():
        k = len(members) // m
        full += [Group(role, members[g * m : (g + 1) * m], n) for g in range(k)]
        if len(members) % m:
            rest.append(members[k * m :])
    if not rest:
        return full
    spare = routers - n * len(full)
    least = min(n, max(2, nets))
    if split and least * len(rest) <= spare:
        sizes = [least] * len(rest)
        for _ in range(spare - least * len(rest)):
            worst = max(range(len(rest)), key=lambda i: (len(rest[i]) / sizes[i], -i))
            sizes[worst] += 1
        return _in_fs_order(full + [Group(role, r, k) for r, k in zip(rest, sizes, strict=True)])
    why = (
        f"{spare} router(s) cannot give the {len(rest)} file systems' remaining "
        f"{role.upper()} a group of at least {least} each"
        if split
        else "a group per file system would leave a client net with fewer routers than groups"
    )
    return full + _mixed(role, rest, n, m, why)


def _mixed(role: str, rest: list[list[Server]], n: int, m: int, why: str) -> list[Group]:
    """The remainders of several file systems cut together into groups of ``m`` (the fallback
    of rule 1), each noting why it mixes them."""
    pool = [s for r in rest for s in r]
    out = []
    for g in range(len(pool) // m):
        members = pool[g * m : (g + 1) * m]
        fss = sorted({s.fs for s in members})
        note = f"mixes file systems {', '.join(fss)}: {why}" if len(fss) > 1 else ""
        out.append(Group(role, members, n, note))
    return out


def _in_fs_order(groups: list[Group]) -> list[Group]:
    return sorted(groups, key=lambda g: g.servers[0].fs)  # stable: full groups first per fs


def net_shortfall(groups: Sequence[Group], routers: Sequence[Router], nets: Sequence[str]) -> bool:
    """Whether some client net of the leaf has fewer routers than ``groups`` (rule 2 cannot be
    kept for every group)."""
    have = [str(r.client_net) for r in routers]
    return any(0 < have.count(c) < len(groups) for c in nets)


def fill(site: Site, routers: Sequence[Router], groups: Sequence[Group]) -> list[list[Router]]:
    """The routers of each group (rules 2 and 3); sizes sum to ``len(routers)``."""
    nets = [str(n) for n in site.clients.nets]
    net_of = np.asarray([nets.index(str(r.client_net)) for r in routers], dtype=np.int64)
    avail = np.bincount(net_of, minlength=len(nets))
    demands = _demands([g.size for g in groups], avail)
    later = np.zeros(len(nets), dtype=np.int64)
    for d in demands:
        later[d] += 1
    free = np.ones(len(routers), dtype=bool)
    hops = _hops(site, routers)
    out: list[list[Router]] = []
    for g, group in enumerate(groups):
        later[demands[g]] -= 1
        uncovered = set(demands[g])
        score = np.zeros(len(routers), dtype=np.int64)
        picked: list[int] = []
        for slot in range(group.size):
            left = group.size - slot
            ok = free & np.isin(net_of, sorted(uncovered))
            if len(uncovered) < left:  # room for a router of a net it has: one later groups spare
                ok |= free & ((avail - later)[net_of] > 0)
            if not ok.any():  # cannot happen when the demands are feasible; keep every router
                ok = free
            cand = np.nonzero(ok)[0]
            j = int(cand[np.argmin(score[cand])])  # argmin: the first (inventory order) of ties
            picked.append(j)
            free[j] = False
            avail[net_of[j]] -= 1
            uncovered.discard(int(net_of[j]))
            if hops is not None:
                score += hops(j)
        out.append([routers[j] for j in sorted(picked)])
    return out


def _demands(sizes: Sequence[int], avail: npt.NDArray[np.int64]) -> list[list[int]]:
    """The client nets (indices) each group must get a router on: every net the leaf has a
    router on, a net going to the groups first in plan order while the leaf has routers on it
    for them, and no group asking for more nets than it takes routers."""
    left = avail.copy()
    out: list[list[int]] = []
    for size in sizes:
        want = [int(c) for c in np.nonzero(left > 0)[0]][:size]
        left[want] -= 1
        out.append(want)
    return out


def _hops(site: Site, routers: Sequence[Router]) -> _Hops | None:
    """Torus hops from one router to all of the leaf's, or None off a torus (rule 3)."""
    if site.torus is None or any(r.coords is None for r in routers):
        return None
    return _Hops(np.asarray([r.coords for r in routers], dtype=np.int64), site.torus.dims)


class _Hops:
    def __init__(self, coords: npt.NDArray[np.int64], dims: tuple[int, int, int]) -> None:
        self.coords = coords
        self.dims = dims

    def __call__(self, j: int) -> npt.NDArray[np.int64]:
        return topology.torus_hops(self.coords, self.coords[j : j + 1], self.dims)[:, 0]
