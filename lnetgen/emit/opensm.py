"""OpenSM fat-tree inputs: ``io_guid_file`` (LNet routers and storage servers, by port GUID)
and, on an InfiniBand compute fabric, ``cn_guid_file`` (compute nodes).  GUIDs are written
``0x`` + 16 hex digits, the node name as a comment-like trailing field (OpenSM allows text
after the GUID).  Hosts without a GUID in the inventory are left out and listed as a warning.
"""

from __future__ import annotations

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.emit.base import Context, OutFile, render

FORMAT = "opensm"


def _guid(g: str) -> str:
    return f"0x{int(g, 16):016x}"


def emit(ctx: Context) -> list[OutFile]:
    site = ctx.site
    entries: list[tuple[str, str]] = []
    missing: list[str] = []
    for r in site.routers:
        if r.guid:
            entries.append((_guid(r.guid), f"{r.name}-{r.storage_interface}"))
        else:
            missing.append(r.name)
        if r.client_guid:
            entries.append((_guid(r.client_guid), f"{r.name}-{r.client_interface}"))
    for s in site.servers:
        if s.guid:
            entries.append((_guid(s.guid), f"{s.name}-{s.interface}"))
        else:
            missing.append(s.name)
    out: list[OutFile] = []
    hosts = [r.name for r in site.routers] + [s.name for s in site.servers]
    if missing:
        ctx.warnings.append(Diagnostic(
            site.file, 0, 0, "warning", "W-NO-GUID", "$",
            f"{len(missing)} router/server(s) have no port GUID and are missing from "
            f"io_guid_file: {nodes.fold(missing)}"))
    if entries:
        out.append(OutFile("opensm/io_guid_file", render(
            "guid_file.j2", header=ctx.header, kind="io_guid_file",
            description="LNet routers and storage servers (I/O nodes for ftree)",
            entries=sorted(entries)), FORMAT, nodes.fold(hosts), "site"))
    if site.clients.guids:
        cn = sorted(zip(site.clients.guids, site.clients.names, strict=True))
        out.append(OutFile("opensm/cn_guid_file", render(
            "guid_file.j2", header=ctx.header, kind="cn_guid_file",
            description="compute nodes on the InfiniBand compute fabric",
            entries=[(_guid(g), n) for g, n in cn]), FORMAT,
            nodes.fold(site.clients.names), "site"))
    return out
