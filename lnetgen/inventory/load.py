"""Checking an inventory file: read it, check it against the schema, then check its meaning.

A schema error inside one router, server or client group leaves that entry out of the meaning
checks (its schema error says why); any other schema error stops before them.  Nothing here
raises for a user mistake except ``load_site``, whose callers want a ``Site`` or an error.
"""

from __future__ import annotations

import dataclasses
import re

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, errors
from lnetgen.inventory.build import build_site
from lnetgen.inventory.context import Context
from lnetgen.inventory.messages import describe
from lnetgen.inventory.schema import droppable, schema_diags
from lnetgen.inventory.yaml11 import number_traps
from lnetgen.model import Site
from lnetgen.yamlsrc import Source, load_file


def check_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    """Schema then meaning checks on a loaded document; never raises for a user mistake."""
    if not isinstance(src.data, dict):
        what = "an empty document" if src.data is None else describe(src.data)
        return None, [
            src.diag(
                (), "E-EMPTY", f"the inventory must be a mapping (site:, routers:, ...), got {what}"
            )
        ]
    found = schema_diags(src)
    found += number_traps(src, {p for p, _ in found})
    diags = [d for _, d in found]
    dropped: set[tuple[str, int]] = set()
    for path, _d in found:
        item = droppable(path)
        if item is None:  # the meaning checks cannot work around this one
            return None, sorted(diags)
        dropped.add(item)
    ctx = Context(src, dropped)
    try:
        site = build_site(ctx)
    except nodes.NodeSyntaxError as exc:  # a syntax the schema let through
        ctx.err((), "E-SYNTAX", str(exc))
        site = None
    out = diags + ctx.diags
    if errors(out):
        site = None
    elif site is not None:
        out += _fabric_findings(src, site)
    return site, sorted(out)


def _fabric_findings(src: Source, site: Site) -> list[Diagnostic]:
    """Warnings that need the whole site (IO nodes on the same port position: OpenSM ftree),
    relocated to the line of the JSON path they name."""
    # deferred to keep importing the inventory light: the fabric code pulls in a graph library
    # that only a site without errors needs
    from lnetgen.fabric import io_port_findings

    out = []
    for d in io_port_findings(site):
        path = tuple(
            int(part[1:-1]) if part.startswith("[") else part.lstrip(".")
            for part in re.findall(r"\[\d+\]|\.[^.\[]+", d.path.removeprefix("$"))
        )
        line, col = src.where(path)
        out.append(dataclasses.replace(d, file=src.file, line=line, col=col))
    return out


def check(path: str) -> tuple[Site | None, list[Diagnostic]]:
    """Load and check an inventory file; never raises for a user mistake."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics
    return check_source(src)


def load_site(path: str) -> tuple[Site, list[Diagnostic]]:
    """The validated ``Site`` and its warnings; raises ``InputError`` if there are errors."""
    site, diags = check(path)
    if site is None or errors(diags):
        raise InputError(diags)
    return site, diags
