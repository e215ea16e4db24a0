"""Library entry points on plain data: validate, solve, generate.  The CLI is a thin layer on
top of these; nothing here prints."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lnetgen import __version__
from lnetgen.diagnostics import Diagnostic, InputError, UsageError, errors, json_path, usage
from lnetgen.drysolve import dry_solve, locate
from lnetgen.emit import DEFAULT_FORMATS, REGISTRY, Context, OutFile, lustre
from lnetgen.emit.base import FileRecord
from lnetgen.emit.readme import readme
from lnetgen.inventory import acknowledge, check_source, load_site
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.planfile import read_plan, stale_plan
from lnetgen.progress import NO_PROGRESS, Progress, counted
from lnetgen.solve import kept_nets
from lnetgen.solve import solve as _solve
from lnetgen.strategies import SolveError
from lnetgen.verify import VerifyResult
from lnetgen.verify import verify as _verify
from lnetgen.write import WriteResult, write_tree
from lnetgen.yamlsrc import Source, load_file

if TYPE_CHECKING:
    from lnetgen.advise.routers import RouterAdvice
    from lnetgen.diff import DiffResult
    from lnetgen.throughput import WorkloadSpec

__all__ = [
    "Generated",
    "advise_routers",
    "generate",
    "load_located",
    "load_plan",
    "load_site",
    "render_files",
    "solve_located",
    "solve_site",
    "validate",
    "verify",
    "write_output",
    "write_tree",
]


def validate(path: str) -> list[Diagnostic]:
    """All diagnostics for an inventory, its default strategy dry-solved (see
    ``lnetgen.drysolve.dry_solve``); ``info`` notes say which other strategies apply."""
    return dry_solve(path)[1]


def solve_site(
    path: str, strategy: str | None = None, keep_path: str | None = None
) -> tuple[Site, Plan, list[Diagnostic]]:
    """Load, validate and solve; with ``keep_path`` (the plan.json deployed now) the storage
    nets of groups still there keep their numbers.  Raises ``InputError`` on any error (a
    solver error located as ``validate`` locates it, see ``_solved``)."""
    src, site, warnings = _load(path)
    return site, _solved(src, site, warnings, strategy, _keep(keep_path)), warnings


def _load(path: str) -> tuple[Source, Site, list[Diagnostic]]:
    """``load_site``, keeping the document so that a solver error can be located in it."""
    src = load_file(path)
    site, diags = check_source(src)
    if site is None or errors(diags):
        raise InputError(diags)
    return src, site, diags


def _solved(
    src: Source,
    site: Site,
    warnings: list[Diagnostic],
    strategy: str | None,
    keep: dict[str, str] | None,
) -> Plan:
    """``site`` solved; a ``SolveError`` is raised again with its diagnostics located where
    their cause lies in the inventory, as ``lnetgen validate`` locates them
    (``lnetgen.drysolve.locate``: the server, router or file system named, the first server
    on a leaf module or group named, else ``strategy.default``), and with the inventory's
    warnings.

    An administrator who runs ``solve`` or ``generate`` on an inventory whose leaf cannot be
    cut into groups expects the same ``site.yaml:230:5: error[E-GROUPS] $.servers[0].attach``
    line ``validate`` gives, not a message at the whole document (``$``, no line) they must
    search for; and, as for any other inventory error, the warnings beside it (a router on the
    wrong leaf often explains a leaf's count)."""
    try:
        return _solve(site, strategy, keep)
    except SolveError as exc:
        located = [locate(src, site, d) for d in exc.diagnostics]
        if (strategy or site.strategy.default) != site.strategy.default:
            # what names nothing of the inventory is not the default strategy's fault
            at_default = json_path(("strategy", "default"))
            located = [
                d if d2.path == at_default else d2
                for d, d2 in zip(exc.diagnostics, located, strict=True)
            ]
        raise SolveError(sorted(warnings + located)) from None


def load_located(path: str) -> tuple[Source, Site, list[Diagnostic]]:
    """The inventory's document, its ``Site`` and warnings, for a command that solves later
    (``solve_located``); raises ``InputError`` on any error."""
    return _load(path)


def solve_located(
    src: Source, site: Site, warnings: list[Diagnostic], strategy: str | None = None
) -> Plan:
    """``site`` (loaded by ``load_located``) solved, a solver error located in ``src`` as every
    command locates it (see ``_solved``)."""
    return _solved(src, site, warnings, strategy, None)


def _keep(keep_path: str | None) -> dict[str, str] | None:
    """group -> net name of the plan at ``keep_path`` (``--keep-nets``)."""
    return kept_nets(read_plan(keep_path)) if keep_path else None


def load_plan(
    path: str,
    strategy: str | None = None,
    plan_path: str | None = None,
    *,
    force: bool = False,
    keep_path: str | None = None,
) -> tuple[Site, Plan, list[Diagnostic]]:
    """The site, its plan and the warnings: solved, or read from ``plan_path`` (a reviewed
    ``plan.json``) and checked against the site.  A plan solved from another version of the
    inventory raises ``UsageError`` (``E-PLAN-STALE``), or with ``force`` is used with a
    warning.  An invalid inventory raises ``InputError``."""
    _src, site, plan, warnings = _load_plan(path, strategy, plan_path, force, keep_path)
    return site, plan, warnings


def _load_plan(
    path: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    keep_path: str | None = None,
    need: Callable[[Site], None] | None = None,
) -> tuple[Source, Site, Plan, list[Diagnostic]]:
    """``load_plan``, with the inventory's document; ``need`` checks the site fits the command
    before anything is solved (it raises ``UsageError``)."""
    if plan_path and strategy:
        raise UsageError([usage("--plan", "give --strategy or --plan, not both")])
    if plan_path and keep_path:
        raise UsageError([usage("--keep-nets", "a reviewed --plan already has its net numbers")])
    plan = read_plan(plan_path) if plan_path else None
    src, site, warnings = _load(path)
    if need is not None:
        need(site)
    if plan is None or plan_path is None:
        return src, site, _solved(src, site, warnings, strategy, _keep(keep_path)), warnings
    return src, site, plan, warnings + stale_plan(plan, site, plan_path, force=force)


def advise_routers(
    path: str,
    spec: WorkloadSpec,
    count: int = 1,
    budget: int = 400,
    strategy: str | None = None,
    plan_path: str | None = None,
    *,
    force: bool = False,
) -> tuple[RouterAdvice, list[Diagnostic]]:
    """``lnetgen.advise.routers.advise_routers`` on the site at ``path`` (its plan as
    ``load_plan`` gives it), told how the inventory lays out its clients (a coordinates CSV,
    or the linear rule that re-lays them when a router moves); and the warnings."""
    from lnetgen.advise.routers import advise_routers as advise
    from lnetgen.inventory.torus import layout_of

    src, site, plan, warnings = _load_plan(path, strategy, plan_path, force, need=_torus_site)
    topology = src.data.get("topology") if isinstance(src.data, dict) else None
    layout = layout_of(topology) if site.torus is not None and topology else None
    return advise(site, plan, spec, count, budget, layout), warnings


def _torus_site(site: Site) -> None:
    """``advise routers`` moves routers between the free router slots of a torus; on another
    client side it has nothing to move.  Decision: refuse before solving (exit 2), naming the
    argument (SITE), the kind of client side the site has and the commands that do apply to it
    -- an administrator who ran it on a Slingshot dragonfly learns it is a limit of the site's
    kind, not a mistake in an option."""
    if site.torus is not None:
        return
    if site.dragonfly is not None:
        kind = "a dragonfly (topology.kind: dragonfly), its routers placed by routers[].dragonfly"
        instead = (
            "to weigh a router placement, edit routers[].dragonfly and compare lnetgen analyze "
            "SITE --workload ... before and after; lnetgen compare SITE weighs the layouts"
        )
    elif site.client_fabric:
        kind = "a fat tree (topology.kind: fat-tree), its routers cabled to leaf ports"
        instead = (
            "lnetgen fabric plan-ports SITE places the routers' ports on the fabric; lnetgen "
            "compare SITE weighs the layouts"
        )
    else:
        kind = "not described (no topology:)"
        instead = "lnetgen compare SITE weighs the layouts"
    raise UsageError(
        [
            usage(
                "SITE",
                "advise routers needs a torus client side: it moves LNet routers to free router "
                "slots (topology.kind: torus, topology.router_slots); this site's client side "
                f"is {kind}: {instead}",
            )
        ]
    )


@dataclass
class Generated:
    """A site's output, rendered file by file as it is consumed.

    ``stream()`` yields every file once -- the emitters' in ``formats`` order, then
    ``plan.json``, ``README.txt`` and ``manifest.json`` -- keeping only a :class:`FileRecord`
    of each, so writing a tree holds one file in memory at a time.  ``warnings`` and
    ``skipped`` fill in as the emitters run; ``files`` renders the whole list once and keeps it
    (tests, small sites).  An emitter's ``InputError`` is raised from the stream, so a write in
    progress fails and leaves the old tree in place."""

    site: Site
    plan: Plan
    formats: list[str] = field(default_factory=list)
    explicit: bool = False
    warnings: list[Diagnostic] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # format -> reason
    records: list[FileRecord] = field(default_factory=list)
    #: the inventory's document: the emitters' findings are located in it (file:line:col)
    source: Source | None = field(default=None, repr=False)
    _files: list[OutFile] | None = field(default=None, repr=False)
    _given: int = field(default=-1, repr=False)

    def stream(self) -> Iterator[OutFile]:
        """Render every file, one at a time; a second stream renders again (same files)."""
        if self._given < 0:
            self._given = len(self.warnings)  # the inventory's, from before rendering
        del self.warnings[self._given :]
        self.records.clear()
        self.skipped.clear()
        symmetric: bool | None = None  # proven once (check_guarantees), shared by formats
        for fmt in self.formats:
            ctx = Context(self.plan, self.site, explicit=self.explicit, _symmetric=symmetric)
            count = 0
            try:
                for f in REGISTRY[fmt](ctx):
                    count += 1
                    yield self._keep(f)
            except InputError as exc:
                raise InputError([self._locate(d) for d in exc.diagnostics]) from None
            # what the inventory acknowledges is not repeated (validate lists it)
            accepted = acknowledge.codes(self.source) if self.source is not None else frozenset()
            self.warnings.extend(
                self._locate(d)
                for d in ctx.warnings
                if d.severity != "warning" or d.code not in accepted
            )
            symmetric = ctx._symmetric
            if not count:
                self.skipped[fmt] = "; ".join(w.message for w in ctx.warnings) or "nothing to emit"
        yield self._keep(OutFile("plan.json", self.plan.to_json(), "plan", "", "site"))
        fss = lustre.filesystems(self.site, self.plan)
        snets = lustre.server_nets(self.site, self.plan)
        yield self._keep(readme(self.plan, self.records, fss, snets, self.site.lustre))
        yield self._keep(
            _manifest(self.site, self.plan, self.records, self.formats, self.skipped, fss, snets)
        )

    def _locate(self, d: Diagnostic) -> Diagnostic:
        """An emitter's finding (its inventory path, no line) at its line in the inventory, as
        ``lnetgen validate`` locates the same finding (``lnetgen.drysolve.locate``)."""
        if self.source is None or d.line or d.file != self.site.file:
            return d
        return locate(self.source, self.site, d)

    def _keep(self, f: OutFile) -> OutFile:
        self.records.append(f.record())
        return f

    def each(self) -> Iterable[OutFile]:
        """The files: the rendered list when ``files`` was read, else the stream."""
        return self._files if self._files is not None else self.stream()

    @property
    def files(self) -> list[OutFile]:
        """Every file, rendered at once."""
        if self._files is None:
            self._files = list(self.stream())
        return self._files


def parse_formats(text: str | None) -> tuple[list[str], bool]:
    """``--formats a,b`` -> (formats, explicit).  ``all`` means every registered format."""
    if not text:
        return list(DEFAULT_FORMATS), False
    items = [t.strip() for t in text.split(",") if t.strip()]
    if items == ["all"]:
        return list(REGISTRY), True
    unknown = [t for t in items if t not in REGISTRY]
    if unknown:
        known = ", ".join(REGISTRY)
        raise UsageError([usage("--formats", f"unknown {', '.join(unknown)} (known: {known})")])
    return [f for f in REGISTRY if f in items], True


def render_files(site: Site, plan: Plan, formats: Sequence[str], explicit: bool) -> Generated:
    """The emitters' files plus ``plan.json``, ``README.txt`` and ``manifest.json``, rendered
    as they are consumed (see :class:`Generated`)."""
    return Generated(site, plan, list(formats), explicit)


def _manifest(
    site: Site,
    plan: Plan,
    files: Sequence[FileRecord],
    formats: Sequence[str],
    skipped: dict[str, str],
    fss: list[lustre.FsDeploy],
    snets: dict[str, str],
) -> OutFile:
    """``manifest.json`` (documented by ``schemas/manifest.schema.json``)."""
    all_fs = tuple(f.name for f in fss)
    per_host = lustre.host_filesystems(site, plan)
    doc = {
        "lnetgen_version": __version__,
        "site": plan.site,
        "strategy": plan.strategy,
        "inventory_digest": plan.inventory_digest,
        "formats": {
            f: (
                {"status": "skipped", "reason": skipped[f]}
                if f in skipped
                else {"status": "written"}
            )
            for f in formats
        },
        "files": [
            {
                "path": f.path,
                "format": f.format,
                "role": f.role,
                "hosts": f.hosts,
                "sha256": f.sha256,
                "fs": lustre.file_filesystems(f.role, f.hosts, all_fs, per_host),
            }
            for f in sorted(files, key=lambda f: f.path)
        ],
        "filesystems": {f.name: f.as_dict() for f in fss},
        "server_nets": snets,
        # the lnetctl and modprobe files name interfaces, not addresses: verify resolves
        # gateway NIDs to routers from here
        "routers": {r.name: [i.nid for i in r.interfaces] for r in plan.routers},
    }
    return OutFile(
        "manifest.json", json.dumps(doc, indent=1, sort_keys=True) + "\n", "manifest", "", "site"
    )


def generate(
    path: str,
    strategy: str | None = None,
    formats: str | None = None,
    plan_path: str | None = None,
    *,
    force: bool = False,
    keep_path: str | None = None,
) -> Generated:
    """Load, validate, solve (or read the reviewed ``plan_path``, see ``load_plan``) and
    render; nothing is written."""
    fmts, explicit = parse_formats(formats)
    src, site, plan, warnings = _load_plan(path, strategy, plan_path, force, keep_path)
    gen = render_files(site, plan, fmts, explicit)
    gen.warnings[:0] = warnings
    gen.source = src
    return gen


def write_output(
    gen: Generated, out: str, *, force: bool = False, progress: Progress = NO_PROGRESS
) -> WriteResult:
    """Write a generated tree atomically under the output lock (see ``lnetgen.write``), file by
    file as it is rendered (the count is not known ahead: the progress total is 0);
    ``force`` overwrites files edited by hand since lnetgen wrote them."""
    tick = progress("writing", 0)
    return write_tree(out, counted(((f.path, f.content) for f in gen.each()), tick), force=force)


def diff(
    path: str, live_path: str, strategy: str | None = None, plan_path: str | None = None
) -> DiffResult:
    """Solve the inventory at ``path`` (or read ``plan_path``) and compare the plan with the
    live state at ``live_path`` (see ``lnetgen.diff.diff``); returns a ``DiffResult``."""
    from lnetgen.diff import diff as _diff
    from lnetgen.live import read_live

    site, plan, _warnings = load_plan(path, strategy, plan_path)
    return _diff(plan, read_live(live_path), site)


def verify(
    out_dir: str | None,
    *,
    live: str | None = None,
    manifest: str | None = None,
    hosts: str | None = None,
    ping: bool = False,
    progress: Progress = NO_PROGRESS,
) -> VerifyResult:
    """Prove the generated tree ``out_dir`` (or the live dumps at ``live``) deployable, file
    system by file system (see ``lnetgen.verify.verify``); returns a
    ``lnetgen.verify.VerifyResult``.  Raises ``InputError`` on unusable input."""
    return _verify(out_dir, live=live, manifest=manifest, hosts=hosts, ping=ping, progress=progress)
