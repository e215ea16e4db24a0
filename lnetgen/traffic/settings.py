"""The model's inputs besides the plan: link and OST rates, explicit workloads, the array types
the model passes around, rounding of reported figures, and the error it raises.

The unit is the *flow*: one OST streaming at the per-OST rate, 180 MB/s by default, so a link
carrying more than ``link_mb_s / ost_mb_s`` flows is past saturation; this is seed 000's
"client-OST pairs per link".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen.diagnostics import Diagnostic, InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: SeaStar2+ one-way link bandwidth measured in seed 000 (MB/s).
LINK_MB_S = 3020.0
#: Per-OST streaming rate in seed 000's direct-attached tests (MB/s).
OST_MB_S = 180.0


def input_error(code: str, message: str) -> InputError:
    """An ``InputError`` with one diagnostic that has no file location."""
    return InputError([Diagnostic("", 0, 0, "error", code, "$", message)])


def rounded(x: Any) -> float:
    """A reported figure: six decimals are plenty, and they hide float noise of the sums."""
    return round(float(x), 6)


@dataclass(frozen=True)
class Settings:
    """Model parameters: link and OST rates (MB/s) and what a server's flows are counted by."""

    link_mb_s: float = LINK_MB_S
    ost_mb_s: float = OST_MB_S
    weight_by: str = "osts"  # osts | servers

    @property
    def saturation(self) -> float:
        """Flows a torus link carries before its one-way bandwidth is exceeded."""
        return self.link_mb_s / self.ost_mb_s


@dataclass(frozen=True, eq=False)
class Workload:
    """Explicit client/server pairs: ``clients[i]`` (index into ``site.clients``) exchanges
    ``flows[i]`` flows with server ``servers[i]`` (a name)."""

    name: str
    clients: IntArray
    servers: tuple[str, ...]
    flows: FloatArray
