"""Warnings about the output that follow from the inventory alone, located at their cause.

``generate``'s emitters used to give these as they wrote, at the whole document (``$``, no
line), and ``validate`` never saw them.  They are facts of the inventory, so its check gives
them, where the administrator edits:

* W-NO-GUID: a host (or client group) on an InfiniBand fabric without a port GUID, left out of
  the OpenSM guid files -- one warning per inventory entry, at the port that has no ``guid``
  (``$.servers[3]``, ``$.routers[0].storage``, ``$.routers[0].rails[1]``,
  ``$.routers[0].client``, ``$.clients[0]``), at most ``MAX_NO_GUID`` and then one naming the
  rest;
* W-MODPROBE-TARGET: roles whose Lustre release no longer parses ``routes=`` get modprobe
  files without routes -- at the ``lustre:`` key that gives that release.

Decision: every command that reads the inventory reports them (and ``acknowledge:`` can accept
them), as for any other inventory warning; the emitters no longer repeat them.
"""

from __future__ import annotations

from typing import Any

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic
from lnetgen.emit.modprobe import target_warning
from lnetgen.emit.opensm import fabric_guids, has_hosts
from lnetgen.model import Site
from lnetgen.yamlsrc import Path, Source

#: W-NO-GUID warnings given one by one; the entries after them share one more.
MAX_NO_GUID = 20


def output_findings(src: Source, site: Site) -> list[Diagnostic]:
    """W-NO-GUID and W-MODPROBE-TARGET of a site without errors, located in ``src``."""
    return _no_guid(src, site) + _target(src, site)


def _no_guid(src: Source, site: Site) -> list[Diagnostic]:
    data: dict[str, Any] = src.data if isinstance(src.data, dict) else {}
    routers = {r.name: i for i, r in enumerate(site.routers)}
    servers = {s.name: i for i, s in enumerate(site.servers)}
    found: dict[Path, tuple[str, list[str]]] = {}  # entry -> (fabric, hosts)
    group_of: dict[str, int] = {}  # client -> its group, filled when a client has no GUID
    for fabric in site.fabrics:
        if not has_hosts(site, fabric):
            continue
        compute = fabric.name == site.client_fabric
        for name in fabric_guids(site, fabric).missing:
            if name in routers:
                i = routers[name]
                path = ("routers", i, "client") if compute else _port(data, "routers", i)
            elif name in servers:
                path = _port(data, "servers", servers[name])
            else:
                if not group_of:
                    group_of = _groups(site)
                path = ("clients", group_of.get(name, 0))
            found.setdefault(path, (fabric.name, []))[1].append(name)
    out = []
    entries = sorted(found.items(), key=lambda kv: src.where(kv[0]))
    for path, (fab, hosts) in entries[:MAX_NO_GUID]:
        if path[0] == "clients":
            message = (
                f"{len(hosts)} client(s) of this group have no port GUID: the OpenSM guid "
                f"files of fabric {fab} leave them out ({nodes.fold(hosts)})"
            )
            hint = "give every client group a guid_base: 0x... (16 hex digits)"
        else:
            message = (
                f"{hosts[0]} has no port GUID here: the OpenSM guid files of fabric {fab} "
                "leave it out"
            )
            hint = "add guid: 0x... (16 hex digits, the Port GUID ibstat shows)"
        out.append(src.diag(path, "W-NO-GUID", message, severity="warning", hint=hint))
    rest = entries[MAX_NO_GUID:]
    if rest:
        hosts = sorted(h for _p, (_f, hs) in rest for h in hs)
        out.append(
            src.diag(
                rest[0][0],
                "W-NO-GUID",
                f"{len(hosts)} more host(s) have no port GUID and are left out of the OpenSM "
                f"guid files: {nodes.fold(hosts)}",
                severity="warning",
            )
        )
    return out


def _groups(site: Site) -> dict[str, int]:
    """client -> the index of its client group."""
    c = site.clients
    out: dict[str, int] = {}
    for g, (_name, start, stop) in enumerate(c.groups):
        out.update(dict.fromkeys(c.names[start:stop], g))
    return out


def _port(data: dict[str, Any], key: str, i: int) -> Path:
    """The first port of router or server ``i`` written without a ``guid``: its storage
    mapping (a router's ``storage:``, a server's own entry), else the rail."""
    entries = data.get(key)
    entry = entries[i] if isinstance(entries, list) and i < len(entries) else {}
    entry = entry if isinstance(entry, dict) else {}
    first = entry.get("storage") if key == "routers" else entry
    base: Path = (key, i, "storage") if key == "routers" else (key, i)
    if not (isinstance(first, dict) and first.get("guid")):
        return base
    for k, rail in enumerate(entry.get("rails") or []):
        if not (isinstance(rail, dict) and rail.get("guid")):
            return (key, i, "rails", k)
    return base


def _target(src: Source, site: Site) -> list[Diagnostic]:
    found = target_warning(site.lustre)
    if found is None:
        return []
    role, message = found
    spec = src.data.get("lustre") if isinstance(src.data, dict) else None
    key = role if isinstance(spec, dict) and role in spec else "version"
    return [src.diag(("lustre", key), "W-MODPROBE-TARGET", message, severity="warning")]


__all__ = ["MAX_NO_GUID", "output_findings"]
