"""The width and speed an ibsim net file gives each link (``lid 0 4xHDR``), from the site's rates.

ibsim reads a port's width and speed from the end of its line in ibnetdiscover syntax
(``sim_net.c`` ``parse_port_link_width_and_speed``: ``lid <n> <w>x<SDR|DDR|QDR|FDR|EDR|HDR|NDR>``).
lnetgen wrote ``4xQDR`` on every link whatever the site, so an HDR site's exported fabric said
QDR.  Decision: host links take their label from ``rates.ib_link``, switch-to-switch links from
``rates.uplink`` (a switch's own rates first), each where the rate is that of a 4x port of one
InfiniBand generation -- nominal (HDR: 200 Gbit/s, 25 GB/s) or measured below it (a DDR port
measured at 1,500 MB/s); the rate is matched to the nearest generation's 4x data rate on a log
scale.  Where there is no rate, the switches of the fabric disagree, or the rate is no 4x
generation ibsim knows (above NDR), the label stays ``4xQDR`` and the file's header says it is
a placeholder.  OpenSM's ftree routing does not read link speeds, so ``fabric check`` counts the
same routes either way; ibsim before 0.11 does not know NDR and keeps its default speed for
such a port (a warning on its console).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lnetgen.model import Fabric, Site

#: The label written where no rate says better (what lnetgen always wrote).
PLACEHOLDER = "4xQDR"
#: 4x data rate in Gbit/s of each generation ibsim parses (SDR-QDR after 8b/10b coding).
GENERATIONS = (
    ("SDR", 8.0),
    ("DDR", 16.0),
    ("QDR", 32.0),
    ("FDR", 54.5),
    ("EDR", 100.0),
    ("HDR", 200.0),
    ("NDR", 400.0),
)


@dataclass(frozen=True)
class LinkSpeeds:
    """The label of host links and of switch-to-switch links, and where they come from."""

    host: str = PLACEHOLDER
    switch: str = PLACEHOLDER
    note: str = "link width/speed 4xQDR: a placeholder (no rates.ib_link or rates.uplink)"


def generation(mb_s: float) -> str | None:
    """``4xHDR`` for a rate (MB/s) that is a 4x port of one generation, else None."""
    gbit = mb_s * 8 / 1000
    lo = GENERATIONS[0][1] / math.sqrt(2)  # below: narrower than 4x SDR
    hi = GENERATIONS[-1][1] * math.sqrt(2)  # above: faster than 4x NDR (XDR: ibsim knows none)
    if not lo <= gbit < hi:
        return None
    name = min(GENERATIONS, key=lambda g: abs(math.log(gbit / g[1])))[0]
    return f"4x{name}"


def link_speeds(site: Site, fabric: Fabric) -> LinkSpeeds:
    """The labels of ``fabric``'s links (see the module docstring)."""
    host, host_why = _label(site, fabric, "ib_link")
    switch, switch_why = _label(site, fabric, "uplink")
    return LinkSpeeds(
        host,
        switch,
        f"link width/speed: host links {host} ({host_why}), switch links {switch} ({switch_why})",
    )


def _label(site: Site, fabric: Fabric, component: str) -> tuple[str, str]:
    rates = {site.switch_rate(component, sw.name) for sw in fabric.switches}
    rates.discard(None)
    if not rates:
        return PLACEHOLDER, f"a placeholder: no rates.{component}"
    if len({r.mb_s for r in rates if r is not None}) > 1:
        return PLACEHOLDER, f"a placeholder: the switches' {component} rates differ"
    rate = next(r for r in rates if r is not None)
    found = generation(rate.mb_s)
    if found is None:
        return PLACEHOLDER, f"a placeholder: {component} {rate.mb_s:g} MB/s is no 4x generation"
    return found, f"{component} {rate.mb_s:g} MB/s"


__all__ = ["GENERATIONS", "PLACEHOLDER", "LinkSpeeds", "generation", "link_speeds"]
