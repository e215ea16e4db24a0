"""Site inventory: YAML with source marks -> JSON Schema -> meaning checks -> ``model.Site``.
``check(path)`` returns every diagnostic (located by file, line, column and JSON path) and the Site.

Layout, from the bottom up: ``messages`` (quoting values back), ``context`` (the document, the
diagnostics, the registries of unique values), ``lnet`` (nets and NIDs), ``schema`` and
``yaml11`` (schema errors and YAML 1.1 traps); one module per section (``fabrics``,
``filesystems``, ``strategy``, ``nets``, ``topology``, ``routers``, ``servers``, ``clients``), the
client placement (``torus``, ``fattree``) and the cross-section checks (``guids``, ``leaves``,
``lustre``: what a file system needs to start, and the server net of each storage fabric);
``build`` runs them and assembles the ``Site``; ``load`` is the entry point.

Meaning checks run even when the schema rejects some routers, servers or client groups: those
entries are left out (their schema errors say why) and the checks that would report their absence
as a problem of its own (a leaf without a router, clients that fit nowhere) are skipped, so one
mistake gives one diagnostic.  The codes are listed in ``CODES`` and in docs/inventory.md.
"""

from __future__ import annotations

from lnetgen import nodes
from lnetgen.inventory.clients import MAX_CLIENTS, MAX_GUID
from lnetgen.inventory.codes import CODES
from lnetgen.inventory.lnet import MAX_NUMERIC_ADDR
from lnetgen.inventory.load import (
    check,
    check_acknowledged,
    check_source,
    check_source_acknowledged,
    load_site,
)
from lnetgen.inventory.messages import MAX_SHOWN
from lnetgen.inventory.schema import MAX_UNKNOWN_KEYS, SITE_SCHEMA
from lnetgen.inventory.torus import MAX_CSV_DIAGS

__all__ = [
    "CODES",
    "MAX_CLIENTS",
    "MAX_CSV_DIAGS",
    "MAX_GUID",
    "MAX_NUMERIC_ADDR",
    "MAX_SHOWN",
    "MAX_UNKNOWN_KEYS",
    "SITE_SCHEMA",
    "check",
    "check_acknowledged",
    "check_source",
    "check_source_acknowledged",
    "load_site",
    "nodes",  # callers reach the node-set parser's errors as ``inventory.nodes``
]
