"""groups (Cray "N:M", Blue Waters 4:3): N routers + M servers of one role on one leaf/TOR form
an LNet group; clients reach a group through all its N routers at priority 0 and through a
backup group's routers at ``backup_priority``.  The backup routers get an interface on the
group's net (same HCA port, another NID) so the backup route is alive under
``avoid_asym_router_failure``.

On each leaf, servers are cut by role (MDS first, then OSS) and file system into groups of M,
each taking N routers; a leaf whose counts do not divide exactly is an error naming the leaf and
the counts.  How the groups are formed (``lnetgen.strategies.groups_fill``): one file system per
group wherever the leaf's routers allow it (a group that must mix them says so in its ``why``),
a router on every client net in every group wherever the leaf has enough, and a group's routers
as close together on the torus as the leaf allows (the same XIO blade on Blue Waters), inventory
order breaking ties.

Backup pairing ``balanced`` (the default): an assignment over each fabric's groups of one file
system -- another leaf/TOR, each group the backup of at most one, the worst per-router load under
a group's loss minimised (``lnetgen.strategies.backup``).  ``next`` (the pairing of lnetgen
0.1, kept to compare): the next group (cyclically, in plan order) of the same file system and
role on a different leaf/switch of the same fabric; if there is none, the next of the same file
system, then the next of the same role, then the next of any kind on a different leaf of that
fabric; if there is none either (a fabric with a single leaf), the group has no backup.
``next`` can make one group the backup of several while others back up none (Blue Waters: 75
of 147).  ``none`` disables backups.
"""

from __future__ import annotations

from lnetgen.diagnostics import Diagnostic
from lnetgen.model import Router, Server, Site
from lnetgen.strategies.backup import assign_backups
from lnetgen.strategies.base import NetSpec, SolveError, Strategy, label, modules
from lnetgen.strategies.groups_fill import Group, cut_role, fill, net_shortfall

NAME = "groups"


def design(site: Site) -> list[NetSpec]:
    params = site.strategy.groups
    specs: list[NetSpec] = []
    problems = []
    for module, servers, routers in modules(site):
        by_role = {
            "mds": [s for s in servers if s.role == "mds"],
            "oss": [s for s in servers if s.role == "oss"],
        }
        need = 0
        cut_ok = True
        for role in ("mds", "oss"):
            n, m = params.mds if role == "mds" else params.oss
            srv = by_role[role]
            if len(srv) % m:
                problems.append(
                    f"leaf {label(module)}: {len(srv)} {role.upper()} cannot be cut "
                    f"into groups of {m} ({n}:{m})"
                )
                cut_ok = False
            need += len(srv) // m * n
        if not cut_ok:
            continue
        if need != len(routers):
            ratios = f"oss {params.oss[0]}:{params.oss[1]}, mds {params.mds[0]}:{params.mds[1]}"
            problems.append(
                f"leaf {label(module)}: {len(routers)} routers for "
                f"{len(by_role['oss'])} OSS + {len(by_role['mds'])} MDS; groups "
                f"({ratios}) need exactly {need}"
            )
            continue
        for gi, (group, chosen) in enumerate(_leaf_groups(site, by_role, routers), 1):
            name = f"{label(module)}#{gi}"
            why = f"group {name}: {len(chosen)} routers + {len(group.servers)} {group.role.upper()}"
            specs.append(
                NetSpec(
                    list(group.servers),
                    chosen,
                    module,
                    group=name,
                    backup_priority=params.backup_priority,
                    why=why + (f"; {group.mixed}" if group.mixed else ""),
                )
            )
    if problems:
        raise SolveError(
            [Diagnostic(site.file, 0, 0, "error", "E-GROUPS", "$", p) for p in problems]
        )
    fabric = {sw.name: f.name for f in site.fabrics for sw in f.switches}
    if params.backup == "next":
        picks: list[NetSpec | None] = [_next_group(specs, i, fabric) for i in range(len(specs))]
    elif params.backup == "balanced":
        picks = [None if j is None else specs[j] for j in assign_backups(specs, fabric)]
    else:
        picks = [None] * len(specs)
    for spec, backup in zip(specs, picks, strict=True):
        if backup is not None:
            spec.backup = list(backup.routers)
            spec.why += f"; backup {backup.group}"
        elif params.backup != "none":
            spec.why += "; no backup (no group of its file system on another leaf of its fabric)"
    return specs


def _leaf_groups(
    site: Site, by_role: dict[str, list[Server]], routers: list[Router]
) -> list[tuple[Group, list[Router]]]:
    """The groups of one leaf (MDS first, then OSS) with their routers: split by file system
    unless that starves a client net a mix would not (``lnetgen.strategies.groups_fill``)."""
    params = site.strategy.groups
    nets = [str(n) for n in site.clients.nets]
    on_leaf = len({str(r.client_net) for r in routers})

    def cut(split: bool) -> list[Group]:
        out: list[Group] = []
        for role in ("mds", "oss"):
            n, m = params.mds if role == "mds" else params.oss
            srv = by_role[role]
            if srv:
                out += cut_role(role, srv, (n, m), len(srv) // m * n, on_leaf, split)
        return out

    groups = cut(True)
    if net_shortfall(groups, routers, nets):
        mixed = cut(False)
        if not net_shortfall(mixed, routers, nets):
            groups = mixed
    return list(zip(groups, fill(site, routers, groups), strict=True))


def _next_group(specs: list[NetSpec], i: int, fabric: dict[str, str]) -> NetSpec | None:
    """The backup for group ``i``: on another leaf of the same fabric (a router on another
    fabric could not reach the servers), the next in plan order of the same file system and
    role, else of the same file system, else of the same role, else any (a group that mixes
    file systems counts each of them as its own)."""
    me = specs[i]
    assert me.module is not None
    role = me.servers[0].role
    mine = {s.fs for s in me.servers}
    home = fabric[me.module[0]]
    order = [
        c
        for c in specs[i + 1 :] + specs[:i]
        if c.module is not None and c.module != me.module and fabric[c.module[0]] == home
    ]
    for same_fs, same_role in ((True, True), (True, False), (False, True)):
        for cand in order:
            fs_ok = bool(mine & {s.fs for s in cand.servers})
            if (not same_fs or fs_ok) and (not same_role or cand.servers[0].role == role):
                return cand
    return order[0] if order else None


STRATEGY = Strategy(
    NAME,
    "N routers + M servers per LNet group on one leaf/TOR (default 4:3) "
    "with a backup group at a worse priority (Blue Waters)",
    design,
)
