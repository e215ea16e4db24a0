"""Where routers sit on leaf modules: next to the servers, evenly, and apart on compute fabrics.

Reads nothing of its own: it compares the checked servers' and routers' attachments.
Reports E-LEAF-NO-ROUTER (servers whose traffic would cross the spine), W-ROUTER-IDLE (a router
on a storage leaf module or TOR that holds no server), W-ROUTER-SPREAD and W-ROUTERS-PER-LEAF.
Adds nothing to the model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from fractions import Fraction

from lnetgen import nodes
from lnetgen.inventory.context import Context
from lnetgen.inventory.fabrics import module_label
from lnetgen.model import Router, Server, Switch


def check_storage_leaves(
    ctx: Context,
    servers: list[tuple[int, Server]],
    router_modules: list[tuple[int, tuple[str, str]]],
) -> None:
    """Every leaf module or TOR with servers needs a router; leaves alike get alike counts."""
    by_leaf_srv: dict[tuple[str, str], list[tuple[int, Server]]] = defaultdict(list)
    by_leaf_rtr: Counter[tuple[str, str]] = Counter()
    for i, s in servers:
        by_leaf_srv[s.attach.module].append((i, s))
    for _, module in router_modules:
        by_leaf_rtr[module] += 1
    for module, held in sorted(by_leaf_srv.items()):
        if by_leaf_rtr[module] == 0:
            i = held[0][0]
            ctx.err(
                ("servers", i, "attach"),
                "E-LEAF-NO-ROUTER",
                f"leaf {module_label(module)} holds {len(held)} server(s) "
                f"({nodes.fold(s.name for _, s in held)}) but no LNet router: "
                "their traffic would have to cross the spine",
                hint="attach at least one router to the same leaf module or TOR",
            )
    _idle_routers(ctx, by_leaf_srv, router_modules)
    # compare leaves that hold the same kind of servers (an MDS TOR with 2 routers next
    # to OSS TORs with 8, as on Blue Waters, is a design, not a mistake)
    # counted per server: a leaf of 8 routers and 6 OSS is as well served as one of 4 and 3
    # (a 4:3 group each), not "unevenly spread"
    kinds: dict[tuple[str, ...], dict[tuple[str, str], tuple[int, int]]] = defaultdict(dict)
    for module, held in by_leaf_srv.items():
        if by_leaf_rtr[module]:
            kind = tuple(sorted({s.role for _, s in held}))
            kinds[kind][module] = (by_leaf_rtr[module], len(held))
    for kind, used in sorted(kinds.items()):
        ratios = {m: Fraction(r, n) for m, (r, n) in used.items()}
        if max(ratios.values()) == min(ratios.values()):
            continue
        counts = Counter(used.values())
        lo = min(used, key=lambda m: (ratios[m], m))
        ctx.warn(
            ("routers",),
            "W-ROUTER-SPREAD",
            f"routers are spread unevenly over the leaf modules that hold "
            f"{'+'.join(r.upper() for r in kind)} servers, per server: "
            + ", ".join(
                f"{k} module(s) with {r} router(s) for {n} server(s)"
                for (r, n), k in sorted(counts.items(), key=lambda t: (Fraction(*t[0]), t[0]))
            )
            + f" (e.g. {module_label(lo)} has {used[lo][0]} for {used[lo][1]})",
        )


def _idle_routers(
    ctx: Context,
    by_leaf_srv: Mapping[tuple[str, str], list[tuple[int, Server]]],
    router_modules: list[tuple[int, tuple[str, str]]],
) -> None:
    """W-ROUTER-IDLE at the storage ``attach`` of every router whose leaf module (or TOR) holds
    no server.

    Fine-grained routing hands each server's net only to the routers on the server's own leaf
    (E-LEAF-NO-ROUTER is the other half of that rule), so such a router forwards nothing in any
    fine-grained layout: the solver counts it as idle and ``generate`` still configures it as
    a router with only its client NI.  An administrator reads that as dead hardware paid for,
    or more often a cabling mistake (the router on the wrong leaf, or its servers' ``attach``
    wrong): a warning, in the spirit of W-ROUTER-SPREAD, not an error -- a leaf being
    cabled ahead of its servers is legitimate, and ``acknowledge:`` accepts it.  Only the
    comparison-only ``baseline`` (one net over the whole fabric) would route through it."""
    by_leaf_rtr: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, module in router_modules:
        if module not in by_leaf_srv:
            by_leaf_rtr[module].append(i)
    for module, idx in sorted(by_leaf_rtr.items()):
        names = [str(ctx.data["routers"][i]["name"]) for i in idx]
        there = f" ({len(idx)} routers there: {nodes.fold(names)})" if len(idx) > 1 else ""
        for i, name in zip(idx, names, strict=True):
            ctx.warn(
                ("routers", i, "attach"),
                "W-ROUTER-IDLE",
                f"router {name} is on leaf {module_label(module)}, which holds no server: "
                f"no fine-grained layout routes storage traffic through it{there}",
                hint="dead hardware or a cabling mistake: check this attach and the servers'",
            )


def check_compute_leaves(
    ctx: Context, routers: list[tuple[int, Router]], switches: Mapping[str, Switch]
) -> None:
    """More than one router (IO node) per compute-fabric leaf: OpenSM ftree concentrates their
    traffic on one spine (LANL's lesson).  A top-of-rack switch without uplinks has no spine
    to concentrate on: routers sharing it are not warned about."""
    per_leaf: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for i, r in routers:
        if r.client_attach is not None:
            per_leaf[r.client_attach.module].append((i, r.name))
    for module, rs in sorted(per_leaf.items()):
        sw = switches.get(module[0])
        lone_tor = sw is not None and sw.kind == "tor" and all(lf.uplinks == 0 for lf in sw.leaves)
        if len(rs) > 1 and not lone_tor:
            ctx.warn(
                ("routers", rs[1][0], "client", "attach"),
                "W-ROUTERS-PER-LEAF",
                f"{len(rs)} routers ({nodes.fold(n for _, n in rs)}) share "
                f"compute-fabric leaf {module_label(module)}; OpenSM ftree routes their "
                "traffic through few spines",
                hint="spread IO nodes one per leaf",
            )
