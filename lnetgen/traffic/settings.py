"""The model's inputs besides the plan: link and OST rates, explicit workloads, the array types
the model passes around, rounding of reported figures, and the error it raises.

The unit is the *flow*: one OST streaming at the per-OST rate, so a link carrying more than
``link_mb_s / ost_mb_s`` flows is past saturation; this is seed 000's "client-OST pairs per
link".  Both rates come from the site's ``rates:`` (the slowest torus direction and the OST);
where the site gives neither, saturation is unknown (infinite here, "n/a" in every report) --
no other machine's figure stands in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Site

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: SeaStar2+ one-way link bandwidth measured in seed 000 (MB/s); Spider's own figure, for tests.
LINK_MB_S = 3020.0
#: Per-OST streaming rate in seed 000's direct-attached tests (MB/s); likewise.
OST_MB_S = 180.0


def input_error(code: str, message: str, where: str = "$") -> InputError:
    """An ``InputError`` with one diagnostic that has no file location; ``where`` names the
    option the value came from (``--client``), when the function's caller is a command."""
    return InputError([Diagnostic("", 0, 0, "error", code, where, message)])


def rounded(x: Any) -> float:
    """A reported figure: six decimals are plenty, and they hide float noise of the sums."""
    return round(float(x), 6)


@dataclass(frozen=True)
class Settings:
    """Model parameters: link and OST rates (MB/s; None: unknown) and what a server's flows
    are counted by.  Build it with :func:`settings_for` to take the site's rates."""

    link_mb_s: float | None = None
    ost_mb_s: float | None = None
    weight_by: str = "osts"  # osts | servers

    @property
    def saturation(self) -> float:
        """Flows a torus link carries before its one-way bandwidth is exceeded; ``inf`` when
        either rate is unknown (no link is then counted past saturation)."""
        if self.link_mb_s is None or self.ost_mb_s is None:
            return math.inf
        return self.link_mb_s / self.ost_mb_s


def mb_s(x: float | None) -> str:
    """A rate for a caption: ``"3020 MB/s"``, or ``"n/a"`` when unknown."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:g} MB/s"


def settings_for(
    site: Site,
    link_mb_s: float | None = None,
    ost_mb_s: float | None = None,
    weight_by: str = "osts",
) -> Settings:
    """The model's settings: the given rates, else the site's (the slowest torus direction,
    the OST rate), else unknown."""
    if link_mb_s is None and site.rates.slowest_link is not None:
        link_mb_s = site.rates.slowest_link.mb_s
    if ost_mb_s is None and site.rates.ost is not None:
        ost_mb_s = site.rates.ost.mb_s
    return Settings(link_mb_s, ost_mb_s, weight_by)


@dataclass(frozen=True, eq=False)
class Workload:
    """Explicit client/server pairs: ``clients[i]`` (index into ``site.clients``) exchanges
    ``flows[i]`` flows with server ``servers[i]`` (a name)."""

    name: str
    clients: IntArray
    servers: tuple[str, ...]
    flows: FloatArray
