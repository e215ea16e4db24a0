"""OpenSM fat-tree inputs, one directory per InfiniBand fabric: ``opensm/<fabric>/``
``io_guid_file``, ``cn_guid_file``, ``root_guid_file`` and ``opensm.conf`` lines.

Each fabric has its own subnet manager, so each gets its own files; who is an I/O node depends
on the fabric (measured with OpenSM 3.3.23 in ibsim, see docs/fabric.md):

* compute fabric (InfiniBand client side): I/O nodes = the LNet routers' compute-side ports,
  compute nodes = the clients;
* storage fabric: I/O nodes = the storage servers.  The routers stay compute nodes there:
  listing routers *and* servers as I/O leaves ftree without a compute node, and OpenSM falls
  back to minhop ("Fabric has no valid compute nodes"); a cn_guid_file is not written either,
  because CAs in neither file (another cluster's routers on a shared backbone) would lose their
  guaranteed routes to the servers.

``root_guid_file`` lists spine node GUIDs when every director of the fabric has all of them.
GUIDs are written ``0x`` + 16 hex digits, the host and interface after them.  Hosts without a
GUID are left out and named in a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.emit.base import Context, OutFile, render
from lnetgen.model import Fabric, Site

FORMAT = "opensm"
#: Where opensm.conf expects the guid files on an SM host.
INSTALL_DIR = "/etc/opensm"
#: Recommended ``max_reverse_hops`` (why: ``REVERSE_WHY``, measured by ``lnetgen fabric check``).
MAX_REVERSE_HOPS = 1
REVERSE_WHY = (
    "1, because measured (OpenSM 3.3.23 on ibsim, Wolf's 36-leaf/18-spine director, 616",
    "compute and 24 IO nodes): with an io_guid_file and 0, ftree routes all compute->IO",
    "traffic through one spine, whatever ports the IO nodes use (busiest leaf uplink 12x the",
    "even share); with 1 it spreads over all spines (1.0x), no route takes a reverse hop, all",
    "408,960 host pairs stay routed and the channel dependency graph is acyclic.  2 changes",
    "nothing.  `lnetgen fabric check SITE` repeats the measurement for this fabric.",
)


@dataclass
class FabricGuids:
    """The guid lists of one fabric: (GUID, 'host interface') pairs, sorted by GUID."""

    fabric: Fabric
    io: list[tuple[str, str]] = field(default_factory=list)
    cn: list[tuple[str, str]] = field(default_factory=list)
    root: list[tuple[str, str]] = field(default_factory=list)
    io_what: str = ""
    cn_what: str = ""
    missing: list[str] = field(default_factory=list)  # hosts without a GUID
    root_note: str = ""  # why there is no root_guid_file


def _guid(g: str) -> str:
    return f"0x{int(g, 16):016x}"


def fabric_guids(site: Site, fabric: Fabric) -> FabricGuids:
    """Who is an I/O node, a compute node and a root switch on ``fabric``."""
    out = FabricGuids(fabric)
    switches = {sw.name for sw in fabric.switches}
    compute = fabric.name == site.client_fabric
    if compute:
        out.io_what = "LNet routers (compute-side ports)"
        out.cn_what = "compute nodes"
        for r in site.routers:
            if r.client_attach is not None and r.client_attach.switch in switches:
                if r.client_guid:
                    out.io.append((_guid(r.client_guid), f"{r.name} {r.client_interface}"))
                else:
                    out.missing.append(r.name)
        c = site.clients
        for i, name in enumerate(c.names):
            if int(c.leaf[i]) < 0:
                continue
            if c.guids:
                iface = c.interfaces[int(c.net_index[i])] if c.interfaces else ""
                out.cn.append((_guid(c.guids[i]), f"{name} {iface}".strip()))
            else:
                out.missing.append(name)
    else:
        out.io_what = "storage servers"
        for s in site.servers:
            if s.attach.switch in switches:
                if s.guid:
                    out.io.append((_guid(s.guid), f"{s.name} {s.interface}"))
                else:
                    out.missing.append(s.name)
        for r in site.routers:
            if r.attach.switch in switches and not r.guid:
                out.missing.append(r.name)
    directors = [sw for sw in fabric.switches if sw.kind == "director" and sw.spines]
    incomplete = [sw.name for sw in directors if len(sw.spine_guids) < sw.spines]
    if not directors:
        out.root_note = "no director with spines on this fabric"
    elif incomplete:
        out.root_note = (
            f"spine GUIDs unknown for {', '.join(incomplete)} (spine_guids); a "
            "partial list would rank the other spines below the roots"
        )
    else:
        for sw in directors:
            out.root += [
                (_guid(g), f"{sw.name} spine {k + 1}")
                for k, g in enumerate(sw.spine_guids[: sw.spines])
            ]
    out.io.sort()
    out.cn.sort()
    out.root.sort()
    return out


def fabric_files(
    site: Site,
    fabric: Fabric,
    header: str,
    directory: str = INSTALL_DIR,
    max_reverse_hops: int = MAX_REVERSE_HOPS,
) -> dict[str, str]:
    """File name -> content for one fabric (``opensm.conf`` and the non-empty guid files);
    ``opensm.conf`` names the guid files under ``directory``.  ``max_reverse_hops`` other
    than the recommended value is for measuring why it is recommended."""
    g = fabric_guids(site, fabric)
    files: dict[str, str] = {}
    conf_files: list[tuple[str, str, str]] = []
    left_out: list[tuple[str, str]] = []
    for key, entries, what in (
        ("io_guid_file", g.io, g.io_what),
        ("cn_guid_file", g.cn, g.cn_what),
        ("root_guid_file", g.root, "spine switches (node GUIDs)"),
    ):
        if entries:
            files[key] = render(
                "guid_file.j2",
                header=header,
                kind=key,
                fabric=fabric.name,
                description=what,
                entries=entries,
            )
            conf_files.append((key, f"{directory}/{key}", f"{len(entries)} {what}"))
        elif key == "cn_guid_file" and fabric.name != site.client_fabric:
            left_out.append(
                (
                    key,
                    "every CA that is not a storage server (the routers, and "
                    "any other cluster's) stays a compute node",
                )
            )
        elif key == "root_guid_file":
            left_out.append((key, g.root_note or "no spine GUIDs"))
        else:
            left_out.append((key, f"no {what} with a GUID in the inventory"))
    files["opensm.conf"] = render(
        "opensm.conf.j2",
        header=header,
        fabric=fabric.name,
        role=fabric.role,
        directory=directory,
        files=conf_files,
        left_out=left_out,
        reverse_why=REVERSE_WHY
        if max_reverse_hops == MAX_REVERSE_HOPS
        else ("not the recommended value: for measurement only",),
        max_reverse_hops=max_reverse_hops,
    )
    return files


def _has_hosts(site: Site, fabric: Fabric) -> bool:
    switches = {sw.name for sw in fabric.switches}
    return (
        fabric.name == site.client_fabric
        or any(r.attach.switch in switches for r in site.routers)
        or any(s.attach.switch in switches for s in site.servers)
    )


def emit(ctx: Context) -> list[OutFile]:
    site = ctx.site
    out: list[OutFile] = []
    missing: list[str] = []
    for fabric in site.fabrics:
        if not _has_hosts(site, fabric):
            continue
        g = fabric_guids(site, fabric)
        missing += g.missing
        for name, content in sorted(fabric_files(site, fabric, ctx.header).items()):
            out.append(OutFile(f"opensm/{fabric.name}/{name}", content, FORMAT, "", "site"))
    if missing:
        ctx.warnings.append(
            Diagnostic(
                site.file,
                0,
                0,
                "warning",
                "W-NO-GUID",
                "$",
                f"{len(set(missing))} host(s) have no port GUID and are missing from the OpenSM "
                f"guid files: {nodes.fold(sorted(set(missing)))}",
            )
        )
    return out
