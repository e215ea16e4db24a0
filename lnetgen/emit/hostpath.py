"""Where in the inventory a host an emitter names was written: its document path.

An emitter's finding is about a host, a client class or a port; the administrator edits the
inventory entry it came from.  ``Site.routers`` and ``Site.servers`` are in document order (a
site exists only when no entry was left out), clients by group (``Clients.groups``), so each
maps to ``$.routers[i]``, ``$.servers[i]``, ``$.clients[g]``; the caller that holds the document
(``lnetgen.drysolve.locate``) turns the path into a line and column.
"""

from __future__ import annotations

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, Severity, json_path
from lnetgen.model import Site
from lnetgen.yamlsrc import Path


def host_path(site: Site, name: str) -> Path:
    """``("routers", i)``, ``("servers", i)`` or ``("clients", g)`` of host ``name``; ``()``
    when the site has no such host."""
    for i, r in enumerate(site.routers):
        if r.name == name:
            return ("routers", i)
    for i, s in enumerate(site.servers):
        if s.name == name:
            return ("servers", i)
    c = site.clients
    for g, (_group, start, stop) in enumerate(c.groups):
        if name in c.names[start:stop]:
            return ("clients", g)
    return ()


def members_path(site: Site, members: str) -> Path:
    """The path of the first host of a folded node set (a client class's members)."""
    try:
        first = nodes.expand(members)[:1]
    except nodes.NodeSyntaxError:
        return ()
    return host_path(site, first[0]) if first else ()


def finding(site: Site, path: Path, severity: Severity, code: str, message: str) -> Diagnostic:
    """A finding at ``path`` of ``site``'s inventory, not yet given its line (``locate``)."""
    return Diagnostic(site.file, 0, 0, severity, code, json_path(path), message)


__all__ = ["finding", "host_path", "members_path"]
