"""A dragonfly client side (HPE Slingshot): which group and switch each client and router sits on.

Reads ``topology.attach[]`` (``nodes``, ``group``, ``switch``, ``per_switch``): the nodes, in
node-set order, fill switches ``switch``, ``switch + 1``, ... of ``group``, ``per_switch`` at a
time (all on ``switch`` without it), and each router's ``dragonfly: {group, switch}``.
Reports E-DFLY-PLACE (a group or switch the dragonfly does not have, a router without its
place), E-DFLY-FULL (a switch with more hosts than ``edge_ports``), E-ATTACH-NODE (strangers,
clients attached twice or not at all) and W-DFLY-UNUSED (a router's place on a site whose
client side is not a dragonfly).  Adds ``Site.clients.switch`` and ``Router.dragonfly``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen import nodes
from lnetgen.inventory.clients import expand, no_strangers
from lnetgen.inventory.context import Context
from lnetgen.model import Dragonfly, Router
from lnetgen.yamlsrc import Path


def router_place(
    ctx: Context, r: dict[str, Any], p: Path, dfly: Dragonfly | None
) -> tuple[tuple[int, int] | None, bool]:
    """The router's (group, switch), and whether it is usable (a problem is reported)."""
    name = r["name"]
    if dfly is None:
        if "dragonfly" in r:
            ctx.warn(
                (*p, "dragonfly"),
                "W-DFLY-UNUSED",
                f"the dragonfly place of {name} is ignored: the client side is not a dragonfly",
            )
        return None, True
    if "dragonfly" not in r:
        ctx.err(
            p,
            "E-DFLY-PLACE",
            f"router {name} needs 'dragonfly: {{group, switch}}': the client side is a dragonfly",
        )
        return None, False
    g, s = r["dragonfly"]["group"], r["dragonfly"]["switch"]
    bad = _outside(dfly, g, s)
    if bad:
        ctx.err((*p, "dragonfly"), "E-DFLY-PLACE", f"{name}: {bad}")
        return (g, s), False
    return (g, s), True


def _outside(dfly: Dragonfly, group: int, switch: int) -> str:
    if group >= dfly.groups:
        return f"group {group} does not exist (the dragonfly has groups 0-{dfly.groups - 1})"
    if switch >= dfly.switches:
        return f"switch {switch} does not exist (a group has switches 0-{dfly.switches - 1})"
    return ""


def dragonfly_places(
    ctx: Context, dfly: Dragonfly, names: list[str], routers: list[Router]
) -> npt.NDArray[np.int32] | None:
    """Each client's switch (``group * switches + switch``), or None when some client is not
    placed, or wrongly (reported)."""
    index = {m: k for k, m in enumerate(names)}
    switch = np.full(len(names), -1, dtype=np.int32)
    ok = True
    for ai, at in enumerate(ctx.data["topology"]["attach"]):
        p: Path = ("topology", "attach", ai)
        members = expand(ctx, at["nodes"], (*p, "nodes"))
        if members is None:
            ok = False
            continue
        ok = _attach(ctx, dfly, at, members, p, index, switch) and ok
    if not ok:
        return None
    loose = np.nonzero(switch < 0)[0]
    if len(loose):
        shown = [names[int(k)] for k in loose[:1000]]
        ctx.err(
            ("topology", "attach"),
            "E-ATTACH-NODE",
            f"{len(loose)} client(s) are not attached to the dragonfly: {nodes.fold(shown)}",
        )
        return None
    if dfly.edge_ports and not _fits(ctx, dfly, switch, routers):
        return None
    return switch


def _attach(
    ctx: Context,
    dfly: Dragonfly,
    at: dict[str, Any],
    members: list[str],
    p: Path,
    index: dict[str, int],
    switch: npt.NDArray[np.int32],
) -> bool:
    """Place the nodes of one ``topology.attach`` entry; False when they cannot be."""
    if not no_strangers(ctx, members, index, (*p, "nodes")):
        return False
    group, first = at["group"], at.get("switch", 0)
    per = at.get("per_switch", len(members) or 1)
    last = first + (len(members) - 1) // per if members else first
    bad = _outside(dfly, group, max(first, last))
    if bad:
        more = (
            f" ({len(members)} nodes, {per} per switch from switch {first})" if last > first else ""
        )
        ctx.err(p, "E-DFLY-PLACE", bad + more)
        return False
    rows = np.asarray([index[m] for m in members], dtype=np.int64)
    twice = rows[switch[rows] >= 0]
    if len(twice):
        shown = [members[k] for k in np.nonzero(switch[rows] >= 0)[0][:1000]]
        ctx.err(
            (*p, "nodes"),
            "E-ATTACH-NODE",
            f"{nodes.fold(shown)} attached twice (also by an earlier entry)",
        )
        return False
    base = group * dfly.switches + first
    switch[rows] = base + np.arange(len(rows), dtype=np.int64) // per
    return True


def _fits(
    ctx: Context, dfly: Dragonfly, switch: npt.NDArray[np.int32], routers: list[Router]
) -> bool:
    """E-DFLY-FULL for switches holding more hosts than ``edge_ports``."""
    hosts = np.bincount(switch, minlength=dfly.groups * dfly.switches)
    for r in routers:
        if r.dragonfly is not None:
            hosts[r.dragonfly[0] * dfly.switches + r.dragonfly[1]] += 1
    over = np.nonzero(hosts > dfly.edge_ports)[0]
    if not len(over):
        return True
    worst = int(over[np.argmax(hosts[over])])
    ctx.err(
        ("topology", "attach"),
        "E-DFLY-FULL",
        f"{len(over)} switch(es) hold more than edge_ports = {dfly.edge_ports} hosts, clients and "
        f"routers together; the fullest, {dfly.label(worst)}, holds {int(hosts[worst])}",
    )
    return False
