"""IO-node placement on a compute fabric for OpenSM's fat-tree engine: the finding and the
staggered port plan that fixes it.

This is the LANL Wolf lesson (seed 002): OpenSM's fat-tree engine gives every destination one
spine, chosen by the destination's position on its leaf, so IO nodes cabled to the same port
number of different leaves share one spine.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.fabric.cabling import Host, fabric_hosts, fabric_of
from lnetgen.fabric.digest import tied
from lnetgen.model import Attachment, Router, Site, Switch

_T = TypeVar("_T")


@dataclass(frozen=True)
class PortMove:
    """Move ``host`` from ``old`` to ``new``; ``swap`` is the host now on ``new`` ('' if free)."""

    host: str
    old: Attachment
    new: Attachment
    swap: str = ""


def _io_routers(site: Site) -> list[tuple[int, Router, Attachment]]:
    """Routers cabled to the IB compute fabric, with their inventory position and their
    attachment there."""
    return [
        (i, r, r.client_attach)
        for i, r in enumerate(site.routers)
        if r.client_attach is not None
        and site.client_fabric
        and _switch_fabric(site, r.client_attach.switch) == site.client_fabric
    ]


def _switch_fabric(site: Site, switch: str) -> str:
    sw = site.switch(switch)
    return sw.fabric if sw is not None else ""


def _directors(site: Site, io: dict[str, list[_T]]) -> Iterator[tuple[Switch, list[_T], int]]:
    """Per switch of ``io`` (switch name -> its IO nodes) with two spines or more, in name
    order: (switch, IO nodes, how many an even spread puts on one port position)."""
    for sw_name in sorted(io):
        sw = site.switch(sw_name)
        if sw is None or sw.spines < 2:
            continue
        items = io[sw_name]
        yield sw, items, math.ceil(len(items) / sw.spines)


def io_port_findings(site: Site) -> list[Diagnostic]:
    """W-IO-SAME-PORT: IO nodes on the same port position (port mod spines) of different leaves
    of one compute-fabric director, more of them than an even spread needs.

    OpenSM's ftree engine routes each destination through one spine, picked by the host's
    position among its leaf's ports, so such IO nodes share a spine (seed 002: all 24 Wolf IO
    nodes on port 18 -> one spine of 18 carried all compute->IO traffic).

    Nothing is reported for a fabric whose recorded OpenSM settings (``fabrics[].opensm``) carry
    a measurement of this very fabric (:func:`lnetgen.fabric.digest.tied`): ``lnetgen fabric
    check`` advised them against no setting and the port plan, and such settings route the IO
    nodes apart (Wolf's record: 12x -> 1.00x, and the plan adds nothing), so the warning's claim
    would not hold there.  Settings recorded unmeasured, or measured on another fabric, do not
    silence it.
    """
    out: list[Diagnostic] = []
    by_switch: dict[str, list[tuple[int, Router, Attachment]]] = defaultdict(list)
    fab = next((f for f in site.fabrics if f.name == site.client_fabric), None)
    if fab is not None and tied(site, fab):
        return out
    for item in _io_routers(site):
        by_switch[item[2].switch].append(item)
    for sw, items, bound in _directors(site, by_switch):
        sw_name, spines = sw.name, sw.spines
        groups: dict[int, list[tuple[int, Router, Attachment]]] = defaultdict(list)
        for item in items:
            groups[(item[2].port - 1) % spines].append(item)
        for residue in sorted(groups):
            grp = groups[residue]
            leaves = {a.leaf for _, _, a in grp}
            if len(grp) <= bound or len(leaves) < 2:
                continue
            ports = sorted({a.port for _, _, a in grp})
            names = nodes.fold(r.name for _, r, _ in grp)
            where = (
                f"port {ports[0]}"
                if len(ports) == 1
                else f"ports {', '.join(map(str, ports))} (same position mod {spines})"
            )
            first = grp[0][0]
            out.append(
                Diagnostic(
                    site.file,
                    0,
                    0,
                    "warning",
                    "W-IO-SAME-PORT",
                    f"$.routers[{first}].client.attach.port",
                    f"{len(grp)} IO nodes ({names}) sit on {where} of {len(leaves)} different "
                    f"leaves of {sw_name}; OpenSM fat-tree routing sends all traffic to them "
                    f"through the same spine of {spines} (an even spread puts at most {bound} "
                    "on a port position)",
                    hint=f"stagger their ports: lnetgen fabric plan-ports {site.file}",
                )
            )
    return out


def not_needed(site: Site) -> str:
    """Why a port plan with moves is not needed on ``site`` ('' when it is, or when there is
    no compute fabric): the compute fabric's recorded OpenSM settings carry a measurement of
    this very fabric (:func:`lnetgen.fabric.digest.tied`), under which ftree routes the IO
    nodes apart -- what silences W-IO-SAME-PORT (:func:`io_port_findings`); else, with no
    finding, the IO nodes that share a port position share one leaf.

    ``plan-ports`` on Wolf printed "22 move(s); recable, then update the inventory" and
    exited 0: an administrator reads an order to recable 22 IO nodes, though the recorded
    settings measured 1.00x (docs/fabric.md).  The moves stay an alternative to the settings,
    and are printed as such."""
    if not site.client_fabric or io_port_findings(site):
        return ""
    fab = fabric_of(site, site.client_fabric)
    rec = fab.opensm
    if rec is not None and tied(site, fab):
        return (
            f"the recorded OpenSM settings of {fab.name} ({rec.label()}; measured: "
            f"{rec.measured}) route the IO nodes apart"
        )
    return "the IO nodes that share a port position share a leaf (no W-IO-SAME-PORT)"


def plan_ports(site: Site, hosts: Sequence[Host] | None = None) -> list[PortMove]:
    """A staggered port plan for the IO nodes of the compute fabric: IO node ``k`` of a
    director (in leaf order) goes to port position ``k mod spines`` of its leaf, swapping
    places with the host already there.  Returns the moves, empty when nothing must move.

    Positions are chosen among the leaf's existing host ports; an IO node already on a
    position no other IO node of the switch uses stays where it is.
    """
    if not site.client_fabric:
        return []
    fab = fabric_of(site, site.client_fabric)
    hs = list(hosts) if hosts is not None else fabric_hosts(site, fab)
    taken: dict[Attachment, str] = {h.attach: h.name for h in hs}
    io = sorted((h for h in hs if h.kind == "router"), key=lambda h: (h.attach, h.name))
    moves: list[PortMove] = []
    by_switch: dict[str, list[Host]] = defaultdict(list)
    for h in io:
        by_switch[h.attach.switch].append(h)
    for sw, group, bound in _directors(site, by_switch):
        sw_name, spines = sw.name, sw.spines
        use: Counter[int] = Counter()
        keep: set[str] = set()
        # keep IO nodes whose position is still free (first come, in leaf order)
        for h in group:
            pos = (h.attach.port - 1) % spines
            if use[pos] < bound:
                use[pos] += 1
                keep.add(h.name)
        io_ports = {h.attach for h in group}
        for k, h in enumerate(group):
            if h.name in keep:
                continue
            leaf = sw.leaf(h.attach.leaf)
            nports = leaf.ports if leaf is not None else h.attach.port
            options = [
                p
                for p in range(1, nports + 1)
                if Attachment(sw_name, h.attach.leaf, p) not in io_ports
            ]
            if not options:
                continue

            p = min(options, key=functools.partial(_cost, k=k, spines=spines, use=use))
            new = Attachment(sw_name, h.attach.leaf, p)
            use[(p - 1) % spines] += 1
            moves.append(PortMove(h.name, h.attach, new, taken.get(new, "")))
            io_ports.discard(h.attach)
            io_ports.add(new)
            if new in taken:
                taken[h.attach] = taken[new]
            else:
                taken.pop(h.attach, None)
            taken[new] = h.name
    return moves


def _cost(port: int, k: int, spines: int, use: Counter[int]) -> tuple[int, int, int]:
    """Prefer the least used position, then position ``k`` (the IO node's turn), then the
    lowest port."""
    pos = (port - 1) % spines
    return (use[pos], (pos - k) % spines, port)


def apply_moves(hosts: Iterable[Host], moves: Sequence[PortMove]) -> list[Host]:
    """Hosts after a port plan: each moved IO node takes its new port, a swapped host the old
    one."""
    new_of = {m.host: m.new for m in moves}
    swap_of = {m.swap: m.old for m in moves if m.swap}
    out = []
    for h in hosts:
        if h.kind == "router" and h.name in new_of and h.attach.switch == new_of[h.name].switch:
            out.append(replace(h, attach=new_of[h.name]))
        elif h.name in swap_of and h.attach.switch == swap_of[h.name].switch:
            out.append(replace(h, attach=swap_of[h.name]))
        else:
            out.append(h)
    return out
