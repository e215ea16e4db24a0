"""GUID ranges of client groups (``clients[].guid_base``) against each other and single GUIDs,
and hosts' node GUIDs against the switch chips'.

Single GUIDs (switches, leaves, spines, server and router ports) are checked for duplicates by the
context's registry; a ``guid_base`` gives one GUID per client of its group, a range checked here.
An HCA's node GUID is its port GUID minus one (as most HCAs and ibsim number them, and as
``lnetgen.fabric`` lays a fabric out for ``fabric export`` and ``fabric check``): it must not be
the null GUID nor a leaf's or spine's node GUID, which OpenSM needs unique.  Reports E-DUP-GUID
and E-GUID.
"""

from __future__ import annotations

import bisect
from typing import Any, NamedTuple

from lnetgen.inventory.context import Context
from lnetgen.yamlsrc import Path


class GuidRange(NamedTuple):
    base: int  # the first GUID
    stop: int  # one past the last
    owner: str  # "client group <name>"
    path: Path  # of its guid_base
    first_client: int  # index of the group's first client among all clients


def check_guid_ranges(
    ctx: Context,
    guid_ranges: list[GuidRange],
    client_names: list[str],
    single: dict[Any, tuple[str, Path]],
) -> None:
    """guid_base ranges must not overlap each other or any single GUID (owner and place)."""
    ranges = sorted(guid_ranges, key=lambda r: (r.base, ctx.src.where(r.path)))
    widest: GuidRange | None = None  # the range reaching furthest
    for r in ranges:
        if widest is not None and r.base < widest.stop:
            first, later = sorted((widest, r), key=lambda x: ctx.src.where(x.path))
            lo, hi = r.base, min(r.stop, widest.stop) - 1
            ctx.err(
                later.path,
                "E-DUP-GUID",
                f"GUIDs 0x{lo:016x}-0x{hi:016x} of {later.owner} are also GUIDs of "
                f"{first.owner} (line {ctx.line(first.path)})",
            )
        if widest is None or r.stop > widest.stop:
            widest = r
    starts = [r.base for r in ranges]
    for g, (owner, path) in sorted(single.items(), key=lambda kv: ctx.src.where(kv[1][1])):
        k = bisect.bisect_right(starts, g) - 1
        # ranges do not overlap (else reported above), so the nearest start decides
        if k >= 0 and g < ranges[k].stop:
            r = ranges[k]
            node = client_names[r.first_client + g - r.base]
            ctx.err(
                path,
                "E-DUP-GUID",
                f"0x{g:016x} (GUID of {owner}) is also the GUID of {node} (guid_base of "
                f"{r.owner}, line {ctx.line(r.path)})",
            )


def check_node_guids(ctx: Context, guid_ranges: list[GuidRange]) -> None:
    """Each host port's node GUID (port GUID - 1) is neither null nor a chip's node GUID."""
    chips: dict[int, tuple[str, Path]] = {}
    for g, owner, path in ctx.host_guids["chip"]:
        chips.setdefault(g, (owner, path))
    for g, owner, path in ctx.host_guids["port"]:
        if g == 1:
            ctx.err(
                path,
                "E-GUID",
                f"0x{g:016x} (GUID of {owner}) would give its HCA the null node GUID "
                "(port GUID - 1)",
            )
        elif g - 1 in chips:
            _taken(ctx, path, f"0x{g - 1:016x}, the node GUID of {owner}", chips[g - 1])
    for r in guid_ranges:
        if r.base == 1:
            ctx.err(
                r.path,
                "E-GUID",
                f"0x{r.base:016x} would give the first client of {r.owner} the null node GUID "
                "(port GUID - 1)",
            )
        clash = next((c for c in sorted(chips) if r.base <= c + 1 < r.stop), None)
        if clash is not None:
            what = f"0x{clash:016x}, the node GUID of a client of {r.owner}"
            _taken(ctx, r.path, what, chips[clash])


def _taken(ctx: Context, path: Path, what: str, chip: tuple[str, Path]) -> None:
    ctx.err(
        path,
        "E-DUP-GUID",
        f"{what} (port GUID - 1, as an HCA numbers it), is also the GUID of {chip[0]} "
        f"(line {ctx.line(chip[1])}); OpenSM needs every node GUID unique",
    )
