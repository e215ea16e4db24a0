"""groups (Cray "N:M", Blue Waters 4:3): N routers + M servers of one role on one leaf/TOR form
an LNet group; clients reach a group through all its N routers at priority 0 and through a
backup group's routers at ``backup_priority``.  The backup routers get an interface on the
group's net (same HCA port, another NID) so the backup route is alive under
``avoid_asym_router_failure``.

On each leaf, servers are cut by role (MDS first, then OSS; by file system and name) into groups
of M, and routers (inventory order) into groups of N for each server group.  A leaf whose
counts do not divide exactly is an error naming the leaf and the counts.

Backup pairing ``balanced`` (the default): an assignment over each fabric's groups of one file
system -- another leaf/TOR, each group the backup of at most one, the worst per-router load under
a group's loss minimised (``lnetgen.strategies.backup``).  ``next`` (the pairing of lnetgen
0.1, kept to compare): the next group (cyclically, in plan order) of the same file system and
role on a different leaf/switch of the same fabric; if there is none, the next group of any kind
on a different leaf of that fabric; if there is none either (a fabric with a single leaf), the
group has no backup.  ``next`` can make one group the backup of several while others back up
none (Blue Waters: 75 of 147).  ``none`` disables backups.
"""

from __future__ import annotations

from lnetgen.diagnostics import Diagnostic
from lnetgen.model import Site
from lnetgen.strategies.backup import assign_backups
from lnetgen.strategies.base import NetSpec, SolveError, Strategy, label, modules

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
        plan: list[tuple[str, list, int]] = []  # type: ignore[type-arg]
        for role in ("mds", "oss"):
            n, m = params.mds if role == "mds" else params.oss
            srv = by_role[role]
            if not srv:
                continue
            if len(srv) % m:
                problems.append(
                    f"leaf {label(module)}: {len(srv)} {role.upper()} cannot be cut "
                    f"into groups of {m} ({n}:{m})"
                )
                continue
            k = len(srv) // m
            need += k * n
            plan.extend((role, srv[g * m : (g + 1) * m], n) for g in range(k))
        if need != len(routers) and not any(label(module) in p for p in problems):
            ratios = f"oss {params.oss[0]}:{params.oss[1]}, mds {params.mds[0]}:{params.mds[1]}"
            problems.append(
                f"leaf {label(module)}: {len(routers)} routers for "
                f"{len(by_role['oss'])} OSS + {len(by_role['mds'])} MDS; groups "
                f"({ratios}) need exactly {need}"
            )
            continue
        pos = 0
        for gi, (role, srv, n) in enumerate(plan, 1):
            group = f"{label(module)}#{gi}"
            specs.append(
                NetSpec(
                    list(srv),
                    routers[pos : pos + n],
                    module,
                    group=group,
                    backup_priority=params.backup_priority,
                    why=f"group {group}: {n} routers + {len(srv)} {role.upper()}",
                )
            )
            pos += n
    if problems:
        raise SolveError(
            [Diagnostic(site.file, 0, 0, "error", "E-GROUPS", "$", p) for p in problems]
        )
    fabric = {sw.name: f.name for f in site.fabrics for sw in f.switches}
    if params.backup == "next":
        chosen: list[NetSpec | None] = [_next_group(specs, i, fabric) for i in range(len(specs))]
    elif params.backup == "balanced":
        chosen = [None if j is None else specs[j] for j in assign_backups(specs, fabric)]
    else:
        chosen = [None] * len(specs)
    for spec, backup in zip(specs, chosen, strict=True):
        if backup is not None:
            spec.backup = list(backup.routers)
            spec.why += f"; backup {backup.group}"
        elif params.backup != "none":
            spec.why += "; no backup (no group of its file system on another leaf of its fabric)"
    return specs


def _next_group(specs: list[NetSpec], i: int, fabric: dict[str, str]) -> NetSpec | None:
    """The backup for group ``i``: on another leaf of the same fabric (a router on another
    fabric could not reach the servers), preferring the same file system and role."""
    me = specs[i]
    assert me.module is not None
    role = me.servers[0].role
    home = fabric[me.module[0]]
    order = [
        c
        for c in specs[i + 1 :] + specs[:i]
        if c.module is not None and c.module != me.module and fabric[c.module[0]] == home
    ]
    for cand in order:
        if cand.fs == me.fs and cand.servers[0].role == role:
            return cand
    return order[0] if order else None


STRATEGY = Strategy(
    NAME,
    "N routers + M servers per LNet group on one leaf/TOR (default 4:3) "
    "with a backup group at a worse priority (Blue Waters)",
    design,
)
