"""OpenSM fat-tree inputs, one directory per InfiniBand fabric: ``opensm/<fabric>/``
``io_guid_file``, ``cn_guid_file``, ``root_guid_file`` and ``opensm.conf``.

The guid files only list GUIDs and change nothing until ``opensm.conf`` names them, so they are
always written.  ``opensm.conf`` carries a setting only when the inventory recorded it for the
fabric (``fabrics[].opensm``): whether a guid file or ``max_reverse_hops`` helps depends on the
fabric (measured with OpenSM in ibsim: on Wolf they spread the IO routes over every spine, on
Spider ``max_reverse_hops 1`` triples the busiest uplink), so ``lnetgen fabric check`` measures
them and the site records its choice, with what the measurement showed
(``fabrics[].opensm.measured``), which ``opensm.conf`` carries as a comment above the settings
(a record without it is written too, marked not measured; the inventory check warns,
W-OPENSM-UNMEASURED).  Without a record ``opensm.conf`` holds only comments.

Who is an I/O node depends on the fabric:

* compute fabric (InfiniBand client side): I/O nodes = the LNet routers' compute-side ports,
  compute nodes = the clients;
* storage fabric: I/O nodes = the storage servers.  The routers stay compute nodes there:
  listing routers *and* servers as I/O leaves ftree without a compute node, and OpenSM falls
  back to minhop ("Fabric has no valid compute nodes"); a cn_guid_file is not written either,
  because CAs in neither file (another cluster's routers on a shared backbone) would lose their
  guaranteed routes to the servers.

``root_guid_file`` lists the spine switches' node GUIDs when every director of the fabric has
all of them.  GUIDs are written ``0x`` + 16 hex digits, the host and interface after them.
Hosts without a GUID are left out; the inventory check names each (W-NO-GUID).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lnetgen.emit.base import Context, OutFile, render
from lnetgen.model import Fabric, OpenSMChoice, Site

FORMAT = "opensm"
#: Where opensm.conf expects the guid files on an SM host.
INSTALL_DIR = "/etc/opensm"


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
                # every port of a Multi-Rail server is an IO port
                for x in s.ports:
                    if x.guid:
                        out.io.append((_guid(x.guid), f"{s.name} {x.interface}"))
                    elif s.name not in out.missing:
                        out.missing.append(s.name)
        for r in site.routers:
            if r.attach.switch in switches and not all(x.guid for x in r.storage_ports):
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
    choice: OpenSMChoice | None,
    directory: str = INSTALL_DIR,
) -> dict[str, str]:
    """File name -> content for one fabric: the non-empty guid files, and ``opensm.conf`` with
    the settings of ``choice`` (``None``: comments only), naming guid files under
    ``directory``.  ``generate`` passes the fabric's recorded choice; ``fabric check`` each
    candidate it measures."""
    g = fabric_guids(site, fabric)
    files: dict[str, str] = {}
    named: list[tuple[str, str, str]] = []
    for key, entries, what in (
        ("io_guid_file", g.io, g.io_what),
        ("cn_guid_file", g.cn, g.cn_what),
        ("root_guid_file", g.root, "spine switches (switch node GUIDs)"),
    ):
        if not entries:
            continue
        files[key] = render(
            "guid_file.j2",
            header=header,
            kind=key,
            fabric=fabric.name,
            description=what,
            node_guids=key == "root_guid_file",
            entries=entries,
        )
        if choice is not None and getattr(choice, key):
            named.append((key, f"{directory}/{key}", f"{len(entries)} {what}"))
    files["opensm.conf"] = render(
        "opensm.conf.j2",
        header=header,
        fabric=fabric.name,
        role=fabric.role,
        directory=directory,
        choice=choice,
        files=named,
        listed=", ".join(sorted(files)) or "none",
    )
    return files


def has_hosts(site: Site, fabric: Fabric) -> bool:
    """The fabric holds hosts lnetgen writes guid files for (its compute or storage side)."""
    switches = {sw.name for sw in fabric.switches}
    return (
        fabric.name == site.client_fabric
        or any(r.attach.switch in switches for r in site.routers)
        or any(s.attach.switch in switches for s in site.servers)
    )


def emit(ctx: Context) -> list[OutFile]:
    """The files of every fabric with hosts.  Hosts without a port GUID are left out of the
    guid files; that is an inventory finding (W-NO-GUID, ``lnetgen.inventory.output``, at each
    host's entry), given by every command that reads the inventory, ``validate`` included."""
    site = ctx.site
    out: list[OutFile] = []
    for fabric in site.fabrics:
        if not has_hosts(site, fabric):
            continue
        files = fabric_files(site, fabric, ctx.header, fabric.opensm)
        for name, content in sorted(files.items()):
            out.append(OutFile(f"opensm/{fabric.name}/{name}", content, FORMAT, "", "site"))
    return out
