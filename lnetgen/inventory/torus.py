"""A torus client side: where each client sits, by rule or from a coordinates CSV file.

Reads ``topology.coordinates``: a numbering rule (``order``, ``skip_routers``, ``reserved``) or
``csv``, a file
of ``node,x,y,z`` rows below the inventory's directory (its bytes join the site digest).
Reports E-TORUS-FULL (positions holding more than ``nodes_per_chip`` nodes, clients that do not
fit), E-TORUS-CSV, E-TORUS-COORD (a CSV row outside the torus), E-PATH and W-SLOT-CLIENTS (a
``router_slots`` entry on a chip that holds clients whose positions are fixed).
Adds ``Site.clients.coords``.

What a ``router_slots`` entry means: a chip whose blade could hold a router -- a service blade's
position, where no compute node sits.  With a coordinates CSV (or ``skip_routers: false``) the
clients' positions do not depend on the routers', so a slot on a chip that holds clients
contradicts that: a router moved there would share the chip with compute nodes, or over-fill it
(E-TORUS-FULL once the move is made).  That is warned about at the slot (W-SLOT-CLIENTS).  With
the linear rule and ``skip_routers: true`` the rule lays clients around the routers wherever they
are, so a slot inside the clients' range holds clients on paper: moving a router there re-lays
every client numbered between its old and new position by one slot (``Layout.relays``), which
``lnetgen advise routers`` says with its advice (``linear_chips`` recomputes the layout).

Retiring a router under that rule is the same move: its slot would go to the next client and
every client numbered after it would shift by one slot -- on paper only, since no compute node
moves when a router blade is retired -- so nearest-neighbor would re-solve the whole machine on
wrong positions.  ``reserved`` (node slots, one per entry, on the linear rule) keeps such a
slot: the retired router's ``coords`` move there and nothing else shifts.  A reserved slot is
never a client's, whatever ``skip_routers`` says, and counts toward its chip's nodes.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, json_path
from lnetgen.inventory.context import Context
from lnetgen.model import Router, Torus
from lnetgen.yamlsrc import Path, read_text

#: At most this many diagnostics from one coordinates CSV file; the rest are counted.
MAX_CSV_DIAGS = 20

_CSV_INT = re.compile(r"[ \t]*-?[0-9]+[ \t]*")


@dataclass(frozen=True)
class Layout:
    """How the inventory lays the clients on the torus (``topology.coordinates``)."""

    csv: bool
    order: str = "xyz"  # the linear rule's: xyz (x fastest) or zyx
    skip_routers: bool = True
    #: the linear rule's ``reserved`` node slots, one per entry (a retired router's blade,
    #: a service node): never a client's, whatever ``skip_routers`` says
    reserved: tuple[tuple[int, int, int], ...] = ()

    @property
    def relays(self) -> bool:
        """Whether the clients' positions follow the routers': the linear rule with
        ``skip_routers`` (a router moved re-lays the clients between its two positions)."""
        return not self.csv and self.skip_routers


def layout_of(topology: Mapping[str, Any]) -> Layout:
    """The layout of a checked ``topology`` section (a torus)."""
    spec = topology.get("coordinates", {"rule": "linear"})
    if "csv" in spec:
        return Layout(True)
    reserved = tuple(
        (int(c[0]), int(c[1]), int(c[2])) for c in spec.get("reserved", ()) if len(c) == 3
    )
    return Layout(False, spec.get("order", "xyz"), spec.get("skip_routers", True), reserved)


def linear_chips(
    dims: tuple[int, int, int],
    nodes_per_chip: int,
    layout: Layout,
    routers: Sequence[tuple[int, int, int]],
    n: int,
) -> npt.NDArray[np.int64] | None:
    """The flat chip index (``x + X*(y + Y*z)``) of each of ``n`` clients under the linear rule
    with routers at ``routers``; None when they do not fit.

    The work scales with the nodes, not the volume: only the first ``n / nodes_per_chip +
    routers + 1`` chips in numbering order are looked at."""
    X, Y, Z = dims
    npc = nodes_per_chip
    taken: dict[int, int] = {}
    skip = layout.skip_routers
    blocking = [*(routers if skip else ()), *layout.reserved]
    for x, y, z in blocking:
        key = x + X * (y + Y * z)
        taken[key] = taken.get(key, 0) + 1
    # enough chips in numbering order for every client even if each router blocks one
    want = min(X * Y * Z, -(-n // npc) + len(blocking) + 1)
    k = np.arange(want, dtype=np.int64)
    # zyx: z fastest, then y, then x
    flat = (k // (Z * Y)) + X * (((k // Z) % Y) + Y * (k % Z)) if layout.order == "zyx" else k
    if taken:
        blocked = np.array([taken.get(int(c), 0) for c in flat], dtype=np.int64)
        cap = np.clip(npc - blocked, 0, None)
    else:
        cap = np.full(want, npc, dtype=np.int64)
    free = np.repeat(flat, cap)
    return free[:n] if len(free) >= n else None


def torus_coords(
    ctx: Context, torus: Torus, names: list[str], routers: list[Router]
) -> npt.NDArray[np.int32] | None:
    """The (x, y, z) of every client, or None when they do not fit (reported).

    The work scales with the nodes that exist, not the volume of the box: only the first
    ``clients / nodes_per_chip + routers + 1`` chips in numbering order are ever looked at, and
    occupancy is counted over the positions taken (a 1024^3 torus with 12 clients costs what a
    4^3 one does)."""
    X, Y, Z = torus.dims
    npc = torus.nodes_per_chip
    chips = X * Y * Z
    topo = ctx.data["topology"]
    spec = topo.get("coordinates", {"rule": "linear"})
    taken: dict[int, int] = {}  # flat chip index -> routers on it
    for r in routers:
        if r.coords is not None:
            x, y, z = r.coords
            key = x + X * (y + Y * z)
            taken[key] = taken.get(key, 0) + 1
    path: Path = ("topology", "coordinates")
    full_at: Path = path if "coordinates" in topo else ("topology",)
    n = len(names)
    for i, c in enumerate(spec.get("reserved", ()) if "csv" not in spec else ()):
        if any(v >= d for v, d in zip(c, torus.dims, strict=True)):
            ctx.err(
                (*path, "reserved", i),
                "E-TORUS-COORD",
                f"reserved slot {list(c)} is outside the {X}x{Y}x{Z} torus",
            )
            return None
        key = c[0] + X * (c[1] + Y * c[2])
        taken[key] = taken.get(key, 0) + 1  # counts toward its chip's nodes, as a router does
    if "csv" in spec:
        got = _coords_csv(ctx, spec["csv"], names, torus.dims, (*path, "csv"))
        if got is None:
            return None
        coords = got
    else:
        at = [r.coords for r in routers if r.coords is not None]
        chip = linear_chips(torus.dims, npc, layout_of(topo), at, n)
        if chip is None:
            ctx.err(
                full_at,
                "E-TORUS-FULL",
                f"{n} clients do not fit in a {X}x{Y}x{Z} torus with {npc} node(s) per "
                f"chip ({chips * npc} slots, {sum(taken.values())} taken by routers)",
            )
            return None
        coords = np.stack([chip % X, (chip // X) % Y, chip // (X * Y)], axis=1)
    flat_c = coords[:, 0] + X * (coords[:, 1] + Y * coords[:, 2])
    used, counts = np.unique(
        np.concatenate([flat_c, np.fromiter(taken, np.int64)]), return_counts=True
    )
    if taken:  # routers count once per router, not once per distinct position
        extra = np.array([taken.get(int(c), 0) for c in used], dtype=np.int64)
        counts = counts + extra - (extra > 0)
    over = used[counts > npc]
    if len(over):
        c = int(over[0])
        pos = [c % X, (c // X) % Y, c // (X * Y)]
        ctx.err(
            full_at,
            "E-TORUS-FULL",
            f"{len(over)} torus position(s) hold more than {npc} node(s), e.g. {pos} "
            f"holds {int(counts[used == c][0])} (clients, routers and reserved slots together)",
        )
        for i, entry in ctx.items("routers"):
            if entry.get("coords") == pos:
                ctx.err(
                    ("routers", i, "coords"),
                    "E-TORUS-FULL",
                    f"{entry['name']} sits on over-filled position {pos}",
                )
        return None
    if not layout_of(topo).relays:
        why = (
            f"the clients' positions come from {spec['csv']}"
            if "csv" in spec
            else "with skip_routers: false the clients' positions ignore the routers'"
        )
        _slots_with_clients(ctx, torus, flat_c, names, taken, why)
    return coords.astype(np.int32)


def _slots_with_clients(
    ctx: Context,
    torus: Torus,
    flat_c: npt.NDArray[np.int64],
    names: list[str],
    taken: Mapping[int, int],
    why: str,
) -> None:
    """W-SLOT-CLIENTS at each ``router_slots`` entry whose chip holds clients, when the
    clients' positions are fixed (see the module docstring)."""
    X, Y, _ = torus.dims
    order = np.argsort(flat_c, kind="stable")
    ordered = flat_c[order]
    for i, slot in enumerate(torus.slots):
        if any(v >= d for v, d in zip(slot, torus.dims, strict=True)):
            continue  # E-TORUS-COORD
        key = slot[0] + X * (slot[1] + Y * slot[2])
        lo, hi = np.searchsorted(ordered, [key, key + 1])
        if lo == hi:
            continue
        held = [names[int(j)] for j in order[lo:hi]]
        room = torus.nodes_per_chip - len(held) - taken.get(key, 0)
        then = (
            "a router moved there would over-fill it (E-TORUS-FULL)"
            if room < 1
            else "a router moved there would share the chip with compute nodes"
        )
        ctx.warn(
            ("topology", "router_slots", i),
            "W-SLOT-CLIENTS",
            f"router slot {list(slot)} is on a chip that holds {len(held)} client(s) "
            f"({nodes.fold(held)}): a slot is where a service blade could hold a router, and "
            f"{why}, so {then}",
            hint="list only service-blade positions in router_slots",
        )


def _csv_text(ctx: Context, rel: str, path: Path) -> tuple[str, str] | None:
    """The file's name as shown and its text, if it lies below the inventory and reads."""
    if os.path.isabs(rel) or ".." in rel.split("/"):
        ctx.err(path, "E-PATH", f"{rel!r} must be a path below the inventory's directory")
        return None
    shown = os.path.join(os.path.dirname(ctx.src.file), rel)
    base = os.path.realpath(os.path.dirname(os.path.abspath(ctx.src.file)))
    if os.path.commonpath([base, os.path.realpath(shown)]) != base:
        ctx.err(
            path,
            "E-PATH",
            f"{rel!r} resolves to a file outside the inventory's directory "
            "(through a symbolic link)",
        )
        return None
    try:
        text = read_text(shown)
    except InputError as exc:
        ctx.err(path, "E-TORUS-CSV", f"cannot read {rel}: {exc.diagnostics[0].message}")
        return None
    return shown, text


def _coords_csv(
    ctx: Context, rel: str, names: list[str], dims: tuple[int, int, int], path: Path
) -> npt.NDArray[np.int64] | None:
    got = _csv_text(ctx, rel, path)
    if got is None:
        return None
    shown, text = got
    ctx.digest.update(text.encode())
    index = {m: k for k, m in enumerate(names)}
    coords = np.full((len(names), 3), -1, dtype=np.int64)
    seen_at: dict[int, int] = {}
    found: list[Diagnostic] = []

    def bad(lineno: int, code: str, msg: str) -> None:
        found.append(Diagnostic(shown, lineno, 1, "error", code, json_path(path), msg))

    for lineno, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or row[0].strip().startswith("#") or row[0].strip() == "node":
            continue
        if len(row) != 4:
            bad(lineno, "E-TORUS-CSV", f"expected 4 fields node,x,y,z, got {len(row)}")
            continue
        node = row[0].strip()
        k = index.get(node)
        if k is None:
            continue  # the CSV may list the whole machine (service nodes included)
        # int() would also take '１', '٣' or '1_000'; a map file has ASCII digits
        if not all(_CSV_INT.fullmatch(v) for v in row[1:]):
            bad(
                lineno,
                "E-TORUS-CSV",
                f"coordinates of {node} must be whole numbers in ASCII digits",
            )
            continue
        xyz = [int(v) for v in row[1:]]
        if any(not 0 <= c < m for c, m in zip(xyz, dims, strict=True)):
            bad(
                lineno,
                "E-TORUS-COORD",
                f"{node} at {xyz} is outside the torus {list(dims)} (coordinates count from 0)",
            )
            continue
        if k in seen_at:
            bad(lineno, "E-TORUS-CSV", f"{node} is listed twice (first at line {seen_at[k]})")
            continue
        seen_at[k] = lineno
        coords[k] = xyz
    if len(found) > MAX_CSV_DIAGS:
        rest = len(found) - MAX_CSV_DIAGS
        found = found[:MAX_CSV_DIAGS]
        found.append(
            Diagnostic(
                shown,
                0,
                0,
                "error",
                "E-TORUS-CSV",
                json_path(path),
                f"{rest} more problem(s) in {rel} not shown",
            )
        )
    ctx.diags.extend(found)
    missing = np.nonzero(coords[:, 0] < 0)[0]
    if len(missing) and not found:
        ctx.err(
            path,
            "E-TORUS-CSV",
            f"{rel} has no coordinates for {len(missing)} client(s), e.g. {names[int(missing[0])]}",
        )
    if found or len(missing):
        return None
    return coords
