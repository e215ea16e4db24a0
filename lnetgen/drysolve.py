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

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, errors, json_path
from lnetgen.emit.findings import plan_findings
from lnetgen.inventory import acknowledge, check_source, check_source_acknowledged
from lnetgen.inventory.load import WARNINGS
from lnetgen.model import Site
from lnetgen.solve import solve
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
    other strategy is solved in full too (guarantees proven, see ``_applies``) and reported as
    one ``info`` note (``I-STRATEGY``) saying that it applies or why not.  Never raises for a
    user mistake.
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
        del plan  # the other strategies' plans are solved one at a time, in bounded memory
    where = _strategy_path(src)
    out += [_at(src, where, APPLIES, _applies(site, name)) for name in REGISTRY if name != default]
    return solved, sorted(out), acked


def _applies(site: Site, name: str) -> str:
    """The ``I-STRATEGY`` note of strategy ``name``: whether ``lnetgen solve --strategy name``
    would succeed, and if not its first problem.

    The note promises what the administrator gets when they switch: "also applies" must mean
    that the strategy solves, its guarantees proven, as the default strategy is.  Trying the
    layout only (design and net numbering) said "also applies" of a strategy that then failed
    with seven E-GUARANTEE (a tcp login net whose one router sits on one leaf, under
    round-robin).  So each strategy is solved in full, one plan at a time (bounded memory:
    one plan is held at once).  That costs about 2 s more on Blue Waters, the largest shipped
    site (round-robin and nearest-neighbor over 25,000 clients); the output formats' checks
    (``plan_findings``, 0.3-1.4 s a plan there) are not run again: their only error,
    E-ANSIBLE-NAMES, is a host in two roles (the same under every strategy, and the default
    strategy's plan gave it) or class groups that collide (named by distinct route digests)."""
    try:
        solve(site, name)
    except SolveError as exc:
        listed = [d.message for d in exc.diagnostics if d is not exc.more]
        unlisted = exc.unlisted
    else:
        return f"strategy {name} also applies (--strategy {name})"
    # the solver lists 20 guarantee failures and then how many more there are (``more``)
    first = listed[0] if listed else "it cannot be formed"
    k = len(listed) - 1 + unlisted
    more = (
        f" (and {k} more problem(s) of {name}: lnetgen solve SITE --strategy {name} lists them)"
        if k > 0
        else ""
    )
    return f"strategy {name} does not apply: {first}{more}"


def locate(src: Source, site: Site, d: Diagnostic) -> Diagnostic:
    """``d`` (a solver finding at ``$`` or a path it named) located in the inventory."""
    path = _parse_path(d.path) if d.path != "$" else _cause(site, d.message, src.data)
    line, col = src.where(path)
    return dataclasses.replace(d, file=src.file, line=line, col=col, path=json_path(path))


def _cause(site: Site, message: str, data: object = None) -> Path:
    """The inventory entry a solver message is about: a server, a router, a leaf module (its
    first server), a file system; else a client class (the first ``clients`` group on its
    net) or a fabric it names; else the strategy the site asked for.

    A message about a class alone (``coverage: class clients-tcp has no priority-0 route to
    o2ib3``) was put at ``strategy.default``, and a non-default ``--strategy`` then at ``$``,
    no line: the clients whose routes are missing are the nearest entry an administrator can
    act on."""
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
    m = re.search(r"\bclass clients-([A-Za-z0-9]+)", message)
    groups = data.get("clients") if isinstance(data, dict) else None
    if m and isinstance(groups, list):
        for i, g in enumerate(groups):
            if isinstance(g, dict) and _same_net(g.get("net"), m[1]):
                return ("clients", i)
    m = re.search(r"\bfabric ([A-Za-z0-9_.-]+)", message)
    for i, f in enumerate(site.fabrics):
        if m and f.name == m[1].rstrip(".,;:"):
            return ("fabrics", i)
    return ("strategy", "default")


def _same_net(text: object, net: str) -> bool:
    try:
        return str(nodes.parse_net(str(text))) == net
    except nodes.NodeSyntaxError:
        return False


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
