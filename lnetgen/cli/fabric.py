"""``lnetgen fabric``: the InfiniBand side -- import ibnetdiscover output, export an ibsim net
file, plan IO-node ports, and check the layout with the real OpenSM on a simulated fabric.

Exit status: 0 ok (``check`` also when OpenSM/ibsim are not installed: it says it skipped);
1 findings (``check``: what ``generate`` writes for a fabric is worse than no setting, makes
ftree fall back, misses its bound or loses routes;
``plan-ports``: IO nodes share a port position); 2 usage or input error.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from lnetgen.bounded import read_at_most
from lnetgen.cli.common import (
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    STRATEGY_OPT,
    TEXT,
    NonEmptyPath,
    handles_input_errors,
    progress_bars,
    quiet_option,
    saved_warnings,
    site_argument,
)
from lnetgen.cli.common import print_diags as _print_diags
from lnetgen.diagnostics import show

if TYPE_CHECKING:
    from lnetgen.fabric.advise import CheckRow, Verdict
    from lnetgen.fabric.trace import Direction
    from lnetgen.model import Site


@click.group(name="fabric")
def command() -> None:
    """InfiniBand fabric: import, export, IO port plan, OpenSM check.

    Exit status: 0 ok, 1 findings, 2 usage or input error.
    """


@command.command(name="import")
@click.argument("kind", type=click.Choice(["ibnetdiscover"]))
@click.argument("file", type=NonEmptyPath(exists=True, dir_okay=False, allow_dash=True))
@click.option("--name", type=TEXT, default=None, help="fabric name (default: the file name)")
@click.option(
    "--role", type=click.Choice(["storage", "compute"]), default="storage", show_default=True
)
@click.option(
    "--out",
    "-o",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="write the YAML here instead of stdout",
)
@handles_input_errors(EXIT_INPUT)
def import_(kind: str, file: str, name: str | None, role: str, out: str | None) -> None:
    """Read ibnetdiscover output (FILE, '-' for stdin) into an inventory fabrics section.

    Leaves are switches with hosts, spines the switches above them; a director is recognised
    from its chips' node descriptions or a shared system image GUID (see docs/fabric.md).
    """
    import os

    from lnetgen.diagnostics import Diagnostic, InputError
    from lnetgen.fabric import imported_yaml, infer_fabric, parse_ibnetdiscover
    from lnetgen.write import write_file
    from lnetgen.yamlsrc import MAX_BYTES, decode_text, read_text

    del kind
    from lnetgen.fabric.infer import fabric_name_problem

    problem = None if name is None else fabric_name_problem(name)
    if problem is not None:
        raise click.BadParameter(f"{show(name)}: {problem}", param_hint="--name")
    # standard input is "<stdin>" in every message (parse errors said "-:")
    label = "<stdin>" if file == "-" else file

    def empty(msg: str) -> InputError:
        return InputError([Diagnostic(label, 0, 0, "error", "E-IBNET-EMPTY", "$", msg)])

    # bounded reads: a device, a pipe or a binary file is refused, never read whole
    if file == "-":
        text = decode_text(read_at_most(sys.stdin.buffer, MAX_BYTES), label)
    else:
        text = read_text(file)
    if not text.strip():
        raise empty("the input is empty: expected the output of ibnetdiscover")
    default = "fabric" if file == "-" else os.path.splitext(os.path.basename(file))[0]
    net = parse_ibnetdiscover(text, label)
    imp = infer_fabric(net, name or default, role)
    if not imp.fabric["switches"]:  # was exit 0 with `switches: []`, which no inventory takes
        sw = sum(1 for n in net.nodes if n.kind == "switch")
        raise empty(
            f"no switch has a host (Ca) cabled to it: no leaf to import ({sw} switch(es), "
            f"{len(net.nodes) - sw} CA(s) read)"
        )
    doc = imported_yaml(imp, "stdin" if file == "-" else os.path.basename(file))
    if out:
        write_file(out, doc)
    else:
        click.echo(doc, nl=False)
    for note in imp.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"{len(imp.fabric['switches'])} switch(es), {len(imp.hosts)} host port(s)", err=True)


@command.command()
@site_argument
@click.option("--format", "fmt", type=click.Choice(["ibsim"]), default="ibsim", show_default=True)
@click.option(
    "--fabric",
    "fabric",
    type=TEXT,
    default=None,
    metavar="NAME",
    help="fabric to export (default: the compute fabric, else the storage fabric)",
)
@click.option(
    "--out",
    "-o",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="write the net file here instead of stdout",
)
@handles_input_errors(writes=True)
def export(site: str, fmt: str, fabric: str | None, out: str | None) -> None:
    """Write a fabric of SITE as an ibsim net file: same GUIDs as the inventory, every leaf
    and spine chip a switch node, full leaf-spine cabling."""
    from lnetgen.fabric import export_ibsim
    from lnetgen.inventory import load_site
    from lnetgen.write import write_file

    del fmt
    s, _warnings = load_site(site)
    _known_fabric(s, fabric)
    text = export_ibsim(s, fabric)
    if out:
        write_file(out, text)
    else:
        click.echo(text, nl=False)


@command.command(name="plan-ports")
@site_argument
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handles_input_errors()
def plan_ports(site: str, fmt: str) -> None:
    """Print a staggered port plan for the IO nodes of SITE's compute fabric: IO nodes on
    different port positions (port mod spine count), so OpenSM ftree spreads them over the
    spines.  Exit 1 when the inventory's placement needs it (W-IO-SAME-PORT); with recorded
    OpenSM settings measured on the fabric (fabric check) it does not, and the moves are
    printed as the alternative to those settings."""
    from lnetgen.api import load_located
    from lnetgen.drysolve import locate
    from lnetgen.fabric import io_port_findings, not_needed
    from lnetgen.fabric import plan_ports as plan

    src, s, _warnings = load_located(site)
    # located as validate locates them (file:line:col of the JSON path they name)
    findings = [locate(src, s, d) for d in io_port_findings(s)]
    _print_diags(findings)
    moves = plan(s)
    why_not = not_needed(s) if moves else ""
    spines = {sw.name: sw.spines for f in s.fabrics for sw in f.switches}
    if fmt == "json":
        doc = {
            "site": s.name,
            "fabric": s.client_fabric or None,
            "findings": [d.as_dict() for d in findings],
            "needed": bool(findings),
            "not_needed": why_not or None,
            "moves": [
                {
                    "host": m.host,
                    "from": {"switch": m.old.switch, "leaf": m.old.leaf, "port": m.old.port},
                    "to": {"switch": m.new.switch, "leaf": m.new.leaf, "port": m.new.port},
                    "position": (m.new.port - 1) % spines.get(m.new.switch, 1) + 1,
                    "spines": spines.get(m.new.switch),
                    "swap_with": m.swap or None,
                }
                for m in moves
            ],
        }
        click.echo(json.dumps(doc, indent=1, sort_keys=True))
        sys.exit(EXIT_FINDINGS if findings else EXIT_OK)
    if not s.client_fabric:
        click.echo(f"{s.name}: no InfiniBand compute fabric; nothing to plan")
        sys.exit(EXIT_OK)
    if not moves:
        click.echo(f"{s.name}: IO node ports are already staggered; no move needed")
        sys.exit(EXIT_FINDINGS if findings else EXIT_OK)
    steps = "recable, then update the inventory (router client.attach.port, and topology.attach "
    steps += "for swapped clients)"
    if why_not:  # exit 0: the plan is an alternative, not an order to recable
        click.echo(
            f"# port plan for {s.name}: not needed: {why_not}; the {len(moves)} move(s) below "
            f"are an alternative: to use it, {steps}"
        )
    else:
        click.echo(f"# port plan for {s.name}: {len(moves)} move(s); {steps}")
    click.echo(f"{'io node':<16} {'from':<20} {'to':<20} {'position':>8}  swap with")
    for m in moves:
        pos = f"{(m.new.port - 1) % spines.get(m.new.switch, 1) + 1}/{spines.get(m.new.switch)}"
        click.echo(
            f"{m.host:<16} {m.old.label() + ':' + str(m.old.port):<20} "
            f"{m.new.label() + ':' + str(m.new.port):<20} {pos:>8}  "
            f"{m.swap or '(free port)'}"
        )
    sys.exit(EXIT_FINDINGS if findings else EXIT_OK)


@command.command()
@site_argument
@click.option(
    "--fabric",
    "fabric",
    type=TEXT,
    default=None,
    metavar="NAME",
    help="fabric to check (default: every fabric with hosts)",
)
@click.option(
    "--keep",
    type=NonEmptyPath(file_okay=False),
    default=None,
    help="keep net files, OpenSM logs and forwarding tables in this directory: a new or "
    "empty one, or one an earlier --keep wrote (see above)",
)
@STRATEGY_OPT
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@quiet_option
@handles_input_errors()
def check(
    site: str, fabric: str | None, keep: str | None, strategy: str | None, fmt: str, quiet: bool
) -> None:
    """Measure OpenSM settings on a simulated copy of each fabric of SITE and say which to
    record (fabrics[].opensm): the advice is followed by the opensm line to put in the
    fabric's inventory entry, with measured: (the figures, the OpenSM version that ran and
    the digest of the fabric measured, which every command checks: W-OPENSM-STALE).

    Runs OpenSM (ftree, once) with no setting, lnetgen's guid files, max_reverse_hops 1, the
    recorded settings and (compute fabric) the IO port plan, and counts the routes between the
    fabric's two host classes per spine and leaf uplink: every compute node with every IO node
    on a compute fabric; on a storage fabric the routers and servers that exchange data in the
    plan of --strategy (a storage net's routers with its servers).  Exit 1 on a fabric where what
    generate writes is worse than no setting, makes ftree fall back, loses routes, allows a
    credit loop or puts more than 2x the best possible on a leaf uplink.  Needs opensm,
    ibsim-utils and infiniband-diags; without them, skips (exit 0) once the inventory
    checks out.

    --keep DIR: the simulations run in a private temporary tree, which then replaces DIR
    whole, with a manifest.json of every file's sha256 (also after a failed simulation: its
    logs say why).  DIR must be new, empty, or what an earlier --keep wrote, unchanged; a
    symbolic link, a file or directory of anyone else's, or a kept file edited since is
    refused (exit 2) before anything runs, listing what is in the way."""
    from lnetgen.api import load_located, solve_located
    from lnetgen.fabric import advise, fabric_digest, simulate
    from lnetgen.fabric import keep as kept

    # the inventory is checked first: a bad one is exit 1 whether or not OpenSM is here
    src, s, warnings = load_located(site)
    _known_fabric(s, fabric)
    missing = simulate.missing_tools()
    if missing:
        reason = (
            f"not installed: {', '.join(missing)} (Debian/Ubuntu: "
            f"apt-get install {' '.join(simulate.PACKAGES)})"
        )
        if fmt == "json":
            click.echo(json.dumps({"skipped": reason, "fabrics": []}, indent=1))
        click.echo(f"fabric check skipped: {reason}", err=True)
        sys.exit(EXIT_OK)
    from lnetgen.fabric.osmversion import opensm_version

    version = opensm_version()  # named in the measured: text the advice gives
    pairs = strategy_used = None
    checked = advise.checked_fabrics(s, fabric)
    if any(f.role == "storage" for f in checked):
        # the site loaded above, not read and validated again; a solver error located in the
        # inventory as every other command locates it (file:line:col, the entry's path)
        plan = solve_located(src, s, warnings, strategy)
        pairs, strategy_used = advise.plan_pairs(plan), plan.strategy
    # a record the check is about to replace says so (W-OPENSM-STALE), as in every command
    stale = {f"$.fabrics[{i}]." for i, f in enumerate(s.fabrics) if f in checked}
    _print_diags(
        w for w in warnings if w.code == "W-OPENSM-STALE" and w.path.startswith(tuple(stale))
    )
    failed = False
    fabrics = []
    error = ""
    # --keep is refused here, before any simulation, when it is not lnetgen's to replace; the
    # simulations run in a private staging tree that replaces it at the end (lnetgen.fabric.keep)
    with kept.staging(keep) as stage:
        for fab in checked:
            try:
                rows = advise.check(s, fab, keep=stage, progress=progress_bars(quiet), pairs=pairs)
            except (simulate.SimError, OSError) as exc:
                error = str(exc)
                click.echo(f"fabric check failed: {error}", err=True)
                break
            verdict = advise.judge(fab, rows)
            judged = strategy_used if fab.role == "storage" else None
            verdict.version, verdict.plan = version, judged
            # named in the measured: text, tying it to fab and the settings it advises
            verdict.digest = fabric_digest(s, fab, verdict.best.choice)
            if judged and judged != s.strategy.default and verdict.best.key != "none":
                verdict.notes.append(
                    f"measured on the {judged} plan, not the inventory's strategy "
                    f"({s.strategy.default}): recorded as printed, the line is W-OPENSM-STALE "
                    f"until strategy.default is {judged}"
                )
            if fmt == "json":
                fabrics.append(check_dict(rows, verdict))
            else:
                if judged:
                    click.echo(
                        f"fabric {fab.name} (storage): the routes between the routers and "
                        f"servers that exchange data in the {judged} plan"
                    )
                for line in report_lines(rows) + verdict_lines(verdict):
                    click.echo(line)
            failed = failed or bool(verdict.problems)
        if stage is not None:  # also after a failure: its logs say why
            res = kept.write_kept(stage, s.name)
            for line in saved_warnings(res.target, res):  # moved aside, never deleted
                click.echo(line, err=True)
            if not quiet:
                n = len(res.written) + len(res.unchanged)
                click.echo(f"fabric check: kept {n} file(s) in {res.target}", err=True)
    if error:
        sys.exit(EXIT_INPUT)
    if fmt == "json":
        out = {"bound": advise.BOUND, "fabrics": fabrics}
        click.echo(json.dumps(out, indent=1, sort_keys=True))
    sys.exit(EXIT_FINDINGS if failed else EXIT_OK)


def report_lines(rows: list[CheckRow]) -> list[str]:
    """The check's printout: per candidate the engine OpenSM used, the routes per spine in
    both directions, the busiest leaf uplink against the best possible, and route health."""
    from lnetgen.fabric.advise import BOUND

    out: list[str] = []
    for row in rows:
        r = row.result
        src, io = r.classes
        f, b, h = r.forward, r.backward, r.health
        tag = " (recorded)" if row.candidate.recorded else ""
        out.append(f"== {row.candidate.key}{tag}: {row.candidate.title} [{row.switch}]")
        engine = f"   OpenSM engine {r.engine}" + (f"; {r.ca_summary}" if r.ca_summary else "")
        out.append(engine + (f"  FALLBACK from ftree: {r.fallback}" if r.fallback else ""))
        # the count in parentheses is every route traced; only those that leave their leaf
        # reach a spine (a label "(72)" over spines summing to 54 read as routes lost)
        for one, two, d in ((src, io, f), (io, src, b)):
            crossing = sum(d.spine)
            out.append(
                f"   {one}->{two} routes per spine ({d.routes} routes, {crossing} spine "
                "crossings): " + " ".join(str(n) for n in d.spine)
            )
        if f.worst_best:
            out.append(
                f"   worst {src}->{io} leaf uplink against its best case: {f.worst_load} routes "
                f"on {f.worst_leaf} (best possible {f.worst_best}): "
                f"{f.worst_ratio:.2f}x" + ("  HOT SPOT" if f.worst_ratio > BOUND else "")
            )
        top = _busiest(f)
        if top is not None:
            out.append(
                f"   most routes on one {src}->{io} leaf uplink: {top[2]} on {top[0]} port {top[1]}"
            )
        out.append(
            f"   all {h.pairs} host pairs: {h.unrouted} unrouted, {h.reverse} with a "
            f"reverse hop, credit loops {'none' if h.cdg_acyclic else 'POSSIBLE'} "
            f"(channel dependency graph of {h.cdg_links} links "
            f"{'acyclic' if h.cdg_acyclic else 'has a cycle: ' + ' -> '.join(h.cycle)})"
        )
        for err in r.log_errors[:3]:
            out.append(f"   opensm: {err}")
    return out


def verdict_lines(v: Verdict) -> list[str]:
    """Per fabric: each candidate's score, the advice and, when it is to record or keep
    settings, the ``opensm:`` line to put in the fabric's inventory entry (indented as there,
    ``measured:`` naming the verdict's OpenSM version, a storage fabric's plan and the digest),
    notes and the problems (exit 1)."""
    from lnetgen.fabric.advise import advice, record_yaml

    out = [f"-- fabric {v.fabric}: busiest leaf uplink / best possible, over all switches"]
    for key, score in v.scores.items():
        flags = []
        if v.fallbacks.get(key):
            flags.append(f"ftree falls back on {len(v.fallbacks[key])} switch(es)")
        if v.unhealthy.get(key):
            flags.append("unrouted pairs or credit loop")
        if key == v.written.key:
            flags.append("what generate writes")
        out.append(f"   {key:<20} {score:5.2f}x" + (f"  ({'; '.join(flags)})" if flags else ""))
    out.append(f"advice: {advice(v)}")
    yaml_line = record_yaml(v)
    if yaml_line:
        out.append(f"    {yaml_line}")
    out.extend(f"note: {n}" for n in v.notes)
    out.extend(f"FAIL: fabric {v.fabric}: {p}" for p in v.problems)
    return out


def _known_fabric(site: Site, name: str | None) -> None:
    """``--fabric NAME`` must name a fabric of the site (a usage error otherwise)."""
    from lnetgen.diagnostics import UsageError, usage

    known = [f.name for f in site.fabrics]
    if name is not None and name not in known:
        raise UsageError(
            [
                usage(
                    "--fabric",
                    f"site {site.name} has no fabric {name!r} (known: {', '.join(known)})",
                )
            ]
        )


def _busiest(d: Direction) -> tuple[str, int, int] | None:
    """(leaf, port, routes) of the uplink carrying the most routes (first in leaf order)."""
    if not d.uplink:
        return None
    (leaf, port), n = max(d.uplink.items(), key=lambda kv: kv[1])
    return leaf, port, n


def _direction_dict(d: Direction) -> dict[str, Any]:
    top = _busiest(d)
    return {
        "routes": d.routes,
        "unrouted": d.unrouted,
        "per_spine": list(d.spine),
        "worst_against_best": (
            {
                "leaf": d.worst_leaf,
                "routes": d.worst_load,
                "best": d.worst_best,
                "ratio": round(d.worst_ratio, 6),
            }
            if d.worst_best
            else None
        ),
        "most_routes": {"leaf": top[0], "port": top[1], "routes": top[2]} if top else None,
    }


def check_dict(rows: list[CheckRow], verdict: Verdict) -> dict[str, Any]:
    """``fabric check --format json``, one fabric: per candidate and switch what
    ``report_lines`` prints, then the verdict ``verdict_lines`` prints (``record``: the
    ``opensm:`` line to record, None when the advice is to record none)."""
    from lnetgen.fabric.advise import BOUND, advice, measured_text, record_yaml

    out = []
    for row in rows:
        r, h = row.result, row.result.health
        out.append(
            {
                "candidate": row.candidate.key,
                "title": row.candidate.title,
                "recorded": row.candidate.recorded,
                "switch": row.switch,
                "engine": r.engine,
                "fallback": r.fallback or None,
                "classes": list(r.classes),
                "forward": _direction_dict(r.forward),
                "backward": _direction_dict(r.backward),
                "health": {
                    "pairs": h.pairs,
                    "unrouted": h.unrouted,
                    "reverse": h.reverse,
                    "cdg_links": h.cdg_links,
                    "cdg_acyclic": h.cdg_acyclic,
                    "cycle": list(h.cycle),
                },
                "hot_spot": r.forward.worst_ratio > BOUND,
                "opensm_errors": list(r.log_errors),
            }
        )
    v = verdict
    return {
        "fabric": v.fabric,
        "candidates": out,
        "scores": {k: round(x, 6) for k, x in v.scores.items()},
        "fallbacks": v.fallbacks,
        "written": v.written.key,
        "best": v.best.key,
        "advice": advice(v),
        "record": record_yaml(v) or None,
        "measured": measured_text(v) if v.best.key != "none" else None,
        "opensm_version": v.version,
        "plan_strategy": v.plan,
        "fabric_digest": v.digest,
        "notes": v.notes,
        "problems": v.problems,
    }


__all__ = ["EXIT_FINDINGS", "EXIT_INPUT", "EXIT_OK", "check_dict", "command"]
