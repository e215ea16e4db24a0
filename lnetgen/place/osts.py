"""Which OSTs a client should use (seed 004): the OSTs whose OSS the client reaches through the
fewest hops to its own gateways, with ``lfs setstripe -c 1 -i <index>`` lines.

Decision (``--count K``): seed 004 places single-stripe files, one per process, each on the
nearest OST still free -- so K OSTs are K files, one line each, and each line names its own
file (``FILE.0`` .. ``FILE.K-1``; one OST keeps ``FILE``).  K lines for the same name would be
refused from the second on: ``lfs setstripe`` sets the layout of a new file only.  A single
file striped over the K OSTs (``-c K -o LIST``) is ``lnetgen advise stripes --job``'s advice,
judged by the model; this command does not judge widths.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import numpy as np

from lnetgen.model import Site
from lnetgen.place.hops import net_hops
from lnetgen.plan import Plan
from lnetgen.traffic import PlanIndex, best_gateways, index_plan, input_error


@dataclass(frozen=True)
class OstChoice:
    fs: str
    index: int
    server: str
    hops: float  # mean hops from the client to its gateways for the OST's server
    routers: tuple[str, ...]  # the client's gateways for that server's net

    def setstripe(self, path: str = "FILE") -> str:
        return f"lfs setstripe -c 1 -i {self.index} {shlex.quote(path)}"  # a shell line


def file_names(path: str, count: int) -> list[str]:
    """The file of each of ``count`` picks: ``path`` alone for one, else ``path.0`` ..
    ``path.{count-1}`` -- one new file per single-stripe layout (see the module docstring)."""
    return [path] if count == 1 else [f"{path}.{i}" for i in range(count)]


def place_osts(
    site: Site,
    plan: Plan,
    client: str,
    count: int = 1,
    fs: str | None = None,
    index: PlanIndex | None = None,
) -> list[OstChoice]:
    """Seed 004: the ``count`` OSTs (of file system ``fs``, or of all) whose OSS the client
    reaches through the fewest torus hops to its own gateways.  Ties go to the OST that is
    earliest on its OSS (so equal-distance picks spread over servers), then file system, OSS
    name and index.  OST indices are per file system, so on a site with several file systems
    holding OSTs ``fs`` must name one.  Raises ``InputError`` (``E-USAGE``) for an unknown
    client or file system, a missing ``fs`` where it is needed, and a ``count`` above the OSTs
    the client can reach."""
    ix = index or index_plan(site, plan)
    if count < 1:
        raise input_error("E-USAGE", f"at least 1, not {count}", "--count")
    try:
        ci = site.clients.names.index(client)
    except ValueError:
        raise input_error(
            "E-USAGE", f"{client!r} is not a client of {site.name}", "--client"
        ) from None
    if fs is not None and fs not in {f.name for f in site.filesystems}:
        raise input_error(
            "E-USAGE",
            f"no file system {fs!r} (known: {', '.join(f.name for f in site.filesystems)})",
            "--fs",
        )
    with_osts = sorted({s.fs for s in site.servers if s.role == "oss" and s.osts})
    if fs is None and len(with_osts) > 1:
        raise input_error(
            "E-USAGE",
            f"{site.name} has {len(with_osts)} file systems with OSTs ({', '.join(with_osts)}); "
            "OST indices are per file system: name one",
            "--fs",
        )
    hops = net_hops(ix)[ci]
    cls = int(ix.client_class[ci])
    by_name = {s.name: s for s in site.servers}
    cands: list[tuple[float, int, str, str, int, tuple[str, ...]]] = []
    for sid, name in enumerate(ix.servers):
        srv = by_name[name]
        if srv.role != "oss" or (fs is not None and srv.fs != fs):
            continue
        k = int(ix.server_net[sid])
        d = float(hops[k])
        if not np.isfinite(d):
            continue
        gws = best_gateways(ix, cls, k)
        for rank, ost in enumerate(srv.osts):
            cands.append((round(d, 6), rank, srv.fs, name, ost, gws))
    cands.sort(key=lambda c: (c[0], c[1], c[2], c[3], c[4]))
    if count > len(cands):
        where = f"file system {fs}" if fs is not None else site.name
        raise input_error(
            "E-USAGE",
            f"{count}: {client} reaches only {len(cands)} OST(s) of {where}",
            "--count",
        )
    return [OstChoice(c[2], c[4], c[3], c[0], c[5]) for c in cands[:count]]
