"""Reports as JSON-ready plain data: dataclasses become dicts (with their derived figures),
tuples lists, floats rounded, numpy scalars Python numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lnetgen.analyze.fabric import FabricPhase
from lnetgen.throughput.predict import Bottleneck
from lnetgen.traffic.settings import Settings, rounded
from lnetgen.traffic.torus import PORTS, LinkStats, RouterUse


def plain(obj: Any) -> Any:
    """``obj`` (analysis dataclasses, tuples, numpy scalars) as JSON-ready plain data."""
    if hasattr(obj, "__dataclass_fields__"):
        d = {k: plain(getattr(obj, k)) for k in obj.__dataclass_fields__}
        if isinstance(obj, FabricPhase):
            d["imbalance"] = rounded(obj.imbalance)
        if isinstance(obj, Settings):
            d["saturation"] = rounded(obj.saturation) if math.isfinite(obj.saturation) else None
        if isinstance(obj, Bottleneck):
            d["utilisation"] = rounded(obj.utilisation)
        if isinstance(obj, RouterUse):
            d["writes_in"] = dict(zip(PORTS, obj.writes_in, strict=True))
            d["reads_out"] = dict(zip(PORTS, obj.reads_out, strict=True))
        if isinstance(obj, LinkStats):
            d["top"] = [{"link": a, "flows": b} for a, b in obj.top]
        return d
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, float):
        return rounded(obj)
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj
