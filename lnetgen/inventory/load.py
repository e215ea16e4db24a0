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
from lnetgen.inventory import acknowledge
from lnetgen.inventory.build import build_site
from lnetgen.inventory.codes import CODES, SOLVED_CODES
from lnetgen.inventory.context import Context
from lnetgen.inventory.messages import describe
from lnetgen.inventory.schema import droppable, schema_diags, top_keys
from lnetgen.inventory.yaml11 import number_traps
from lnetgen.model import Site
from lnetgen.yamlsrc import Source, load_file

#: Every warning code a check can give: what ``acknowledge:`` may name.
WARNINGS = frozenset(
    c for c in CODES if c.startswith("W-") and c != "W-ACK-UNUSED" and c not in SOLVED_CODES
)
WARNINGS |= acknowledge.OTHER_WARNINGS | acknowledge.PLAN_WARNINGS


def check_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    """Schema then meaning checks on a loaded document; never raises for a user mistake.
    Warnings the inventory acknowledges are left out (see ``check_source_acknowledged``)."""
    site, diags, _acked = check_source_acknowledged(src)
    return site, diags


def check_source_acknowledged(
    src: Source,
) -> tuple[Site | None, list[Diagnostic], list[Diagnostic]]:
    """``check_source``, plus the warnings its ``acknowledge:`` entries accept."""
    site, diags = _check_source(src)
    kept, acked = acknowledge.split(src, diags, WARNINGS, unjudged=acknowledge.PLAN_WARNINGS)
    if errors(kept):
        site = None
    return site, kept, acked


def _check_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    if not isinstance(src.data, dict):
        what = "an empty document" if src.data is None else describe(src.data)
        if isinstance(src.data, str):
            what = "a line of text"  # not echoed: the file may be anything
        return None, [
            src.diag(
                (), "E-EMPTY", f"the inventory must be a mapping (site:, routers:, ...), got {what}"
            )
        ]
    if src.data and not top_keys().intersection(map(str, src.data)):
        # none of an inventory's keys: some other file, whose keys are not echoed
        return None, [
            src.diag(
                (), "E-EMPTY", "not an inventory: no top-level key is an inventory's (site:, ...)"
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
        out += _output_findings(src, site)
    return site, sorted(out)


def _fabric_findings(src: Source, site: Site) -> list[Diagnostic]:
    """Warnings that need the whole site (IO nodes on the same port position: OpenSM ftree; a
    recorded OpenSM measurement not tied to the fabric as it is now), relocated to the line of
    the JSON path they name."""
    # deferred to keep importing the inventory light: the fabric code pulls in a graph library
    # that only a site without errors needs
    from lnetgen.fabric import io_port_findings, record_findings

    out = []
    for d in io_port_findings(site) + record_findings(site):
        path = tuple(
            int(part[1:-1]) if part.startswith("[") else part.lstrip(".")
            for part in re.findall(r"\[\d+\]|\.[^.\[]+", d.path.removeprefix("$"))
        )
        line, col = src.where(path)
        out.append(dataclasses.replace(d, file=src.file, line=line, col=col))
    return out


def _output_findings(src: Source, site: Site) -> list[Diagnostic]:
    """W-NO-GUID, W-MODPROBE-TARGET: what the output will lack, at the inventory's cause
    (``lnetgen.inventory.output``; deferred like the fabric's, it imports the emitters)."""
    from lnetgen.inventory.output import output_findings

    return output_findings(src, site)


def check(path: str) -> tuple[Site | None, list[Diagnostic]]:
    """Load and check an inventory file; never raises for a user mistake.  Acknowledged
    warnings are left out."""
    site, diags, _acked = check_acknowledged(path)
    return site, diags


def check_acknowledged(path: str) -> tuple[Site | None, list[Diagnostic], list[Diagnostic]]:
    """``check``, plus the warnings the inventory acknowledges (for ``validate``)."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics, []
    return check_source_acknowledged(src)


def load_site(path: str) -> tuple[Site, list[Diagnostic]]:
    """The validated ``Site`` and its warnings; raises ``InputError`` if there are errors."""
    site, diags = check(path)
    if site is None or errors(diags):
        raise InputError(diags)
    return site, diags
