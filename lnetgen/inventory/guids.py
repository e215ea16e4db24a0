"""GUID ranges of client groups (``clients[].guid_base``) against each other and single GUIDs.

Single GUIDs (switches, leaves, spines, server and router ports) are checked for duplicates by the
context's registry; a ``guid_base`` gives one GUID per client of its group, a range checked here.
Reports E-DUP-GUID.
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
