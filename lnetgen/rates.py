"""The rates of a site's components (``rates:`` in the inventory), each with its source.

The throughput model (``lnetgen.traffic.bandwidth``) shares these out; a rate the inventory
does not give is None, and every figure that needs it is reported "n/a" -- lnetgen never
borrows a figure from another machine.  Units are decimal, as the papers use them:
1 GB/s = 1,000 MB/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lnetgen.diagnostics import show

#: Multipliers to MB/s.
UNITS: dict[str, float] = {"MB/s": 1.0, "GB/s": 1_000.0, "TB/s": 1_000_000.0}
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?) ?(MB/s|GB/s|TB/s)$")
#: The range a rate may take, in MB/s (the command line's --ost-mb-s and --link-mb-s take the
#: same): 1 byte/s to 1 EB/s.  Beyond it the model's sums run out of floating point -- a
#: 400-digit rate is infinity, and infinity less infinity is NaN, which JSON cannot hold.
MIN_MB_S = 1e-6
MAX_MB_S = 1e12

#: Torus link directions, in ``lnetgen.topology.DIRECTIONS`` order, as the inventory spells them.
DIRECTION_KEYS: tuple[str, ...] = ("x+", "x-", "y+", "y-", "z+", "z-")
#: The single-rate components, in the order reports list them.
COMPONENTS: tuple[str, ...] = (
    "injection",
    "fabric_link",
    "local_link",
    "global_link",
    "router",
    "ib_link",
    "uplink",
    "oss",
    "ost",
)


def parse_rate(text: str) -> float:
    """MB/s of ``"2.6 GB/s"`` and the like; ``ValueError`` for anything else, zero included
    (a component that moves nothing is not a rate: leave the rate out where it is unknown), and
    for a rate outside ``MIN_MB_S``-``MAX_MB_S``."""
    m = _RATE.match(text.strip())
    if m is None:
        raise ValueError(f'{show(text)} is not a rate: write e.g. "3020 MB/s" or "2.6 GB/s"')
    value = float(m.group(1)) * UNITS[m.group(2)]
    if not any(c in "123456789" for c in m.group(1)):
        raise ValueError(f"{show(text)} is no rate: leave a rate out where it is not known")
    if not MIN_MB_S <= value <= MAX_MB_S:
        raise ValueError(
            f"{show(text)} is outside the rates lnetgen models (0.000001 MB/s to 1000000 TB/s)"
        )
    return value


@dataclass(frozen=True)
class Rate:
    """One figure in MB/s and where it comes from."""

    mb_s: float
    source: str


@dataclass(frozen=True)
class Rates:
    """Every rate the inventory gives; None where it gives none.

    ``torus_link`` holds one rate per direction (``DIRECTION_KEYS`` order) or is None.
    """

    torus_link: tuple[Rate, ...] | None = None
    injection: Rate | None = None
    fabric_link: Rate | None = None
    local_link: Rate | None = None  # between two switches of a dragonfly group
    global_link: Rate | None = None  # between two dragonfly groups
    router: Rate | None = None
    ib_link: Rate | None = None
    uplink: Rate | None = None
    oss: Rate | None = None
    ost: Rate | None = None

    def get(self, component: str) -> Rate | None:
        """The rate of one of ``COMPONENTS``."""
        got: Rate | None = getattr(self, component)
        return got

    @property
    def slowest_link(self) -> Rate | None:
        """The slowest torus direction (what a one-figure flow count is measured against)."""
        if self.torus_link is None:
            return None
        return min(self.torus_link, key=lambda r: r.mb_s)


NO_RATES = Rates()
