"""Validate's dry solve: check an inventory, then solve its default strategy and say which other
strategies apply, with every solver finding located in the inventory.

The solver reports against the site (``$``) and names what it is about in its message: a
server, a router, a leaf module (``core1/L02``, a group ``core1/L02#3``), a file system.  ``locate``
turns that into the JSON path of the inventory entry the cause lies in (the first server on a
leaf, the server, the router, the file system) and its line and column, so a dry-solve error
reads like any other validate error.  ``lnetgen validate`` and the library's ``validate`` use
``dry_solve``; anything else that needs "would this inventory generate?" should too.
"""

from __future__ import annotations

import dataclasses
import re

from lnetgen.diagnostics import Diagnostic, InputError, errors, json_path
from lnetgen.emit.findings import plan_findings
from lnetgen.inventory import acknowledge, check_source, check_source_acknowledged
from lnetgen.inventory.load import WARNINGS
from lnetgen.model import Site
from lnetgen.solve import net_names_for, solve
from lnetgen.strategies import REGISTRY, SolveError
from lnetgen.yamlsrc import Path, Source, load_file

#: The code of the notes saying whether another strategy applies.
APPLIES = "I-STRATEGY"


def dry_solve(path: str) -> tuple[Site | None, list[Diagnostic]]:
    """Check the inventory at ``path`` and dry-solve it (see ``dry_solve_source``)."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics
    return dry_solve_source(src)


def dry_solve_source(src: Source) -> tuple[Site | None, list[Diagnostic]]:
    """Every diagnostic of the inventory, then of solving it.

    When the inventory has no error: its default strategy (``strategy.default``) is solved in
    full, guarantees included, and each ``SolveError`` diagnostic comes back as an error located
    where its cause lies in the inventory (the site is then None: it would not generate).  The
    plan then meets the checks ``generate``'s default formats make before they write
    (``lnetgen.emit.findings``: W-MODPROBE-SKIPPED, W-ANSIBLE-NO-MODPROBE, E-ANSIBLE-NAMES),
    located the same way, so a site that validates cleanly generates without a warning.  Every
    other strategy is tried up to its layout (design and net numbering, not the full guarantee
    proof, which ``lnetgen compare`` runs) and reported as one ``info`` note (``I-STRATEGY``)
    saying that it applies or why not.  Never raises for a user mistake.
    """
    site, diags = check_source(src)
    solved, out, _acked = _dry_solve_checked(src, site, diags)
    return solved, out


def dry_solve_acknowledged(
    path: str,
) -> tuple[Site | None, list[Diagnostic], list[Diagnostic]]:
    """``dry_solve``, with the warnings the inventory's ``acknowledge:`` entries accept set
    apart (the third item), as ``lnetgen validate`` shows them."""
    try:
        src = load_file(path)
    except InputError as exc:
        return None, exc.diagnostics, []
    site, kept, acked = check_source_acknowledged(src)
    solved, diags, acked_plan = _dry_solve_checked(src, site, kept)
    return solved, diags, sorted(acked + acked_plan)


def _dry_solve_checked(
    src: Source, site: Site | None, diags: list[Diagnostic]
) -> tuple[Site | None, list[Diagnostic], list[Diagnostic]]:
    """The dry solve of an inventory already checked into ``site`` and ``diags``; the third
    item: the plan's warnings its ``acknowledge:`` entries accept (set apart, as the checks'
    are by ``check_source_acknowledged``)."""
    acked: list[Diagnostic] = []
    if site is None or errors(diags):
        return None, diags, acked
    default = site.strategy.default
    out = list(diags)
    solved: Site | None = site
    try:
        plan = solve(site, default)
    except SolveError as exc:
        out += [locate(src, site, d) for d in exc.diagnostics]
        solved = None
    else:
        found = [locate(src, site, d) for d in plan_findings(site, plan)]
        found, acked = acknowledge.split(src, found, WARNINGS, only=acknowledge.PLAN_WARNINGS)
        out += found
        if errors(found):
            solved = None
    where = _strategy_path(src)
    for name in REGISTRY:
        if name == default:
            continue
        try:
            net_names_for(site, name)
        except SolveError as exc:
            first = exc.diagnostics[0].message if exc.diagnostics else "it cannot be formed"
            k = len(exc.diagnostics) - 1
            more = (
                f" (and {k} more problem(s) of {name}: lnetgen solve SITE --strategy {name} "
                "lists them)"
                if k > 0
                else ""
            )
            msg = f"strategy {name} does not apply: {first}{more}"
        else:
            msg = f"strategy {name} also applies (--strategy {name})"
        out.append(_at(src, where, APPLIES, msg))
    return solved, sorted(out), acked


def locate(src: Source, site: Site, d: Diagnostic) -> Diagnostic:
    """``d`` (a solver finding at ``$`` or a path it named) located in the inventory."""
    path = _parse_path(d.path) if d.path != "$" else _cause(site, d.message)
    line, col = src.where(path)
    return dataclasses.replace(d, file=src.file, line=line, col=col, path=json_path(path))


def _cause(site: Site, message: str) -> Path:
    """The inventory entry a solver message is about: a server, a router, a leaf module (its
    first server), a file system; else the strategy the site asked for."""
    servers = {s.name: i for i, s in enumerate(site.servers)}
    routers = {r.name: i for i, r in enumerate(site.routers)}
    fss = {f.name: i for i, f in enumerate(site.filesystems)}
    leaves: dict[str, int] = {}
    for i, s in enumerate(site.servers):
        leaves.setdefault(s.attach.label(), i)
    for token in re.findall(r"[A-Za-z0-9_.#/-]+", message):
        token = token.rstrip(".,;:")
        if token in servers:
            return ("servers", servers[token])
        if token in routers:
            return ("routers", routers[token])
        leaf = token.split("#")[0]
        if leaf in leaves:
            return ("servers", leaves[leaf], "attach")
        if token in fss:
            return ("filesystems", fss[token])
    return ("strategy", "default")


def _parse_path(text: str) -> Path:
    parts: list[str | int] = []
    for piece in re.findall(r"\[\d+\]|\.[^.\[]+", text.removeprefix("$")):
        parts.append(int(piece[1:-1]) if piece.startswith("[") else piece[1:])
    return tuple(parts)


def _strategy_path(src: Source) -> Path:
    data = src.data if isinstance(src.data, dict) else {}
    strategy = data.get("strategy")
    if isinstance(strategy, dict) and "default" in strategy:
        return ("strategy", "default")
    return ("strategy",) if isinstance(strategy, dict) else ()


def _at(src: Source, path: Path, code: str, message: str) -> Diagnostic:
    line, col = src.where(path)
    return Diagnostic(src.file, line, col, "info", code, json_path(path), message)
