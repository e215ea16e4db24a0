"""The model's inputs besides the plan: link and OST rates, explicit workloads, the array types
the model passes around, rounding of reported figures, and the error it raises.

The unit is the *flow*: one OST streaming at the per-OST rate, so a link carrying more than
``link_mb_s / ost_mb_s`` flows is past saturation; this is seed 000's "client-OST pairs per
link".  Both rates come from the site's ``rates:`` (the slowest torus direction and the OST);
where the site gives neither, saturation is unknown (infinite here, "n/a" in every report) --
no other machine's figure stands in.  Each rate keeps where it came from (``Settings.link_source``,
``ost_source``): the inventory's entry with its source (:func:`rate_entry`), or the command-line
option that gave it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.model import Site
from lnetgen.rates import DIRECTION_KEYS, Rate

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
    are counted by; where each rate came from (``"ost 180 MB/s: seed 000 s3: ..."``, the
    inventory's entry and its source, or ``"--ost-mb-s"``; "" when the caller gave it).  Build
    it with :func:`settings_for` to take the site's rates."""

    link_mb_s: float | None = None
    ost_mb_s: float | None = None
    weight_by: str = "osts"  # osts | servers
    link_source: str = ""
    ost_source: str = ""

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


def given_mb_s(x: float | None, source: str) -> str:
    """A rate for a caption, named by its option when one gave it: ``"180 MB/s"``,
    ``"200 MB/s (--ost-mb-s)"`` (the inventory's rates go in a legend, :func:`rate_entry`)."""
    return mb_s(x) + (f" ({source})" if x is not None and source.startswith("--") else "")


def rate_entry(key: str, rate: Rate, where: str = "") -> str:
    """A rate with where it came from, as reports print it: ``"ost 180 MB/s: seed 000 s3:
    ..."`` (the inventory's ``rates:`` key, the figure, the entry's ``source``); ``where``
    names what the key applies to (``" on switch core2"``, ``" y (the slowest direction)"``)."""
    return f"{key}{where} {mb_s(rate.mb_s)}: {source_text(rate.source)}"


def source_text(source: str) -> str:
    """A rate's ``source`` on one line (a block scalar's line breaks and tabs as spaces)."""
    return " ".join(source.split()) or "no source given"


def torus_entry(rates: Sequence[Rate], only: int | None = None) -> str:
    """The torus link rates (``DIRECTION_KEYS`` order) as one entry: ``"torus_link 3020
    MB/s: ..."`` when every direction has one rate, else per dimension or direction
    (``"torus_link x 9375 MB/s, y 4687.5 MB/s, ..."``); ``only``: the one direction of
    that index."""
    source = source_text(rates[0].source)
    if only is not None:
        return f"torus_link {DIRECTION_KEYS[only]} {mb_s(rates[only].mb_s)}: {source}"
    values = [r.mb_s for r in rates]
    if len(set(values)) == 1:
        return f"torus_link {mb_s(values[0])}: {source}"
    parts = []
    for axis in range(3):
        plus, minus = values[2 * axis], values[2 * axis + 1]
        name = DIRECTION_KEYS[2 * axis][0]
        if plus == minus:
            parts.append(f"{name} {mb_s(plus)}")
        else:
            parts.append(f"{name}+ {mb_s(plus)}, {name}- {mb_s(minus)}")
    return f"torus_link {', '.join(parts)}: {source}"


def settings_for(
    site: Site,
    link_mb_s: float | None = None,
    ost_mb_s: float | None = None,
    weight_by: str = "osts",
) -> Settings:
    """The model's settings: the given rates (the command line's ``--link-mb-s`` and
    ``--ost-mb-s``, and labelled so), else the site's (the slowest torus direction, the OST
    rate, with their entries), else unknown."""
    link_source = "--link-mb-s" if link_mb_s is not None else ""
    ost_source = "--ost-mb-s" if ost_mb_s is not None else ""
    slowest = site.rates.slowest_link
    if link_mb_s is None and slowest is not None and site.rates.torus_link is not None:
        link_mb_s = slowest.mb_s
        link_source = _slowest_entry(site.rates.torus_link)
    if ost_mb_s is None and site.rates.ost is not None:
        ost_mb_s = site.rates.ost.mb_s
        ost_source = rate_entry("ost", site.rates.ost)
    return Settings(link_mb_s, ost_mb_s, weight_by, link_source, ost_source)


def _slowest_entry(rates: Sequence[Rate]) -> str:
    """``"torus_link y 4687.5 MB/s (the slowest direction): ..."``; the bare entry when every
    direction has the one rate."""
    low = min(r.mb_s for r in rates)
    if all(r.mb_s == low for r in rates):
        return torus_entry(rates)
    slow = [k for k, r in zip(DIRECTION_KEYS, rates, strict=True) if r.mb_s == low]
    dims = {k[0] for k in slow}
    names = sorted(dims) if len(slow) == 2 * len(dims) else slow
    source = source_text(rates[0].source)
    return f"torus_link {', '.join(names)} {mb_s(low)} (the slowest direction): {source}"


@dataclass(frozen=True, eq=False)
class Workload:
    """Explicit client/server pairs: ``clients[i]`` (index into ``site.clients``) exchanges
    ``flows[i]`` flows with server ``servers[i]`` (a name)."""

    name: str
    clients: IntArray
    servers: tuple[str, ...]
    flows: FloatArray
