"""A diff as text for people (``format_text``, ``format_steps``) and as JSON (``to_dict``).

The text shows values of the live dumps (interface names, UDSP rules, health notes), which can
hold any character: every line of it is made ``printable`` (a control character, a bidi
override shown escaped, ``\\x1b``, ``\\u202e``), so none reaches the terminal.  The JSON keeps
them as they are, escaped by JSON itself.
"""

from __future__ import annotations

import shlex
from typing import Any

from lnetgen.diagnostics import printable
from lnetgen.diff.outages import SERVER_NET_OUTAGE
from lnetgen.diff.result import (
    DiffResult,
    Group,
    HostDiff,
    NetEntry,
    RouteEntry,
    fold_hosts,
    show_name,
)
from lnetgen.diff.steps import KEEP_NETS_HINT, Step
from lnetgen.udsp import Rule


def _route_text(r: RouteEntry) -> str:
    return f"route {r[0]} via {r[1]} hop {r[2]} priority {r[3]}"


def diff_lines(d: HostDiff) -> list[str]:
    """One line per change: ``+`` add, ``-`` remove, ``~`` change, ``!`` not fixable by LNet."""
    out: list[str] = []
    out += [f"+ net {n} ({','.join(i) or '-'})" for n, i in d.add_nets]
    out += [f"- net {n} ({','.join(i) or '-'})" for n, i in d.remove_nets]
    out += [f"~ net {n} interfaces {','.join(h)} -> {','.join(w)}" for n, h, w in d.change_nets]
    out += [f"! nid on {n}: live {', '.join(h)}, inventory {w}" for n, h, w in d.nids]
    if d.routing:
        out.append(
            "~ routing: disabled -> enabled"
            if d.routing == "enable"
            else "~ routing: enabled -> disabled"
        )
    out += [f"+ {_route_text(r)}" for r in d.add_routes]
    out += [f"- {_route_text(r)}" for r in d.remove_routes]
    for name, have, want in d.tunables:
        out.append(
            f"~ tunable {name}: {'not set' if have is None else have} -> "
            f"{'not set' if want is None else want}"
        )
    out += [f"+ udsp {r.options()}" for r in d.add_udsp]
    out += [f"- udsp {r.options()} (idx {i})" for i, r in d.remove_udsp]
    for r in d.change_routes:
        parts = []
        if r[2] != r[4]:
            parts.append(f"hop {r[2]} -> {r[4]}")
        if r[3] != r[5]:
            parts.append(f"priority {r[3]} -> {r[5]}")
        out.append(f"~ route {r[0]} via {r[1]}: {', '.join(parts)}")
    return [printable(line) for line in out]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _show_path(path: str) -> str:
    """A dump's file name as it is when printable; else escaped (without quotes)."""
    return path if path.isprintable() else ascii(path)[1:-1]


def format_text(result: DiffResult) -> str:
    """The human-readable report (ends with a newline)."""
    out: list[str] = []
    src = result.live_path
    if result.generated and result.generated.get("site"):  # (lnetgen collect writes none)
        gen = result.generated
        src += (
            f" (lnetgen output for site {gen.get('site', '?')}, strategy "
            f"{gen.get('strategy', '?')})"
        )
    out.append(f"site {result.site}, strategy {result.strategy} vs live {src}")
    out.append(
        f"{_count(result.compared, 'host')} compared: {result.equal_count} equal, "
        f"{result.differ_count} differ; {result.missing_count} missing, {len(result.unknown)} "
        f"unknown, {len(result.errors)} unreadable "
        f"{'dump' if len(result.errors) == 1 else 'dumps'}"
    )
    for g in result.groups:
        out.append("")
        out.append(f"{g.hosts} ({g.diff.role}, {_count(g.count, 'host')})")
        out.extend(f"  {line}" for line in diff_lines(g.diff))
    if result.missing_count:
        out.append("")
        out.append(
            f"missing (in the plan, no live dump): {result.missing} "
            f"({_count(result.missing_count, 'host')})"
        )
        out.extend(_reason_lines(result))
    if result.unknown:
        out.append("")
        out.append(
            f"unknown (live dump, not in the plan): {fold_hosts(h for h, _f in result.unknown)}"
        )
        for host, files in result.unknown[:20]:
            out.append(f"  {show_name(host)}: {', '.join(_show_path(f) for f in files)}")
        if len(result.unknown) > 20:
            out.append(f"  ... and {len(result.unknown) - 20} more")
    if result.errors:
        out.append("")
        # a file whose name is not a host name belongs to no host
        hosts = f" ({result.error_hosts})" if result.error_hosts else ""
        out.append(f"unreadable dumps{hosts}:")
        out.extend(f"  {d.format()}" for d in result.errors)
    if result.health:
        out.append("")
        out.append("health (not configuration; does not change the exit status):")
        out.extend(f"  {hosts}: {note}" for hosts, _n, note in result.health)
    if not result.differs:
        out.append("")
        out.append("live state equals the plan")
    return "\n".join(printable(line) for line in out) + "\n"


#: Most rows of reasons the text shows (the JSON has them all), as for unknown hosts.
MAX_REASON_ROWS = 20


def _reason_lines(result: DiffResult) -> list[str]:
    """Why ``lnetgen collect`` could not read the missing hosts, one line per reason (made
    printable with the rest of the text)."""
    rows = result.missing_reasons
    out = [
        f"  {hosts}: lnetgen collect failed: {reason}"
        for hosts, _n, reason in rows[:MAX_REASON_ROWS]
    ]
    if len(rows) > MAX_REASON_ROWS:
        out.append(f"  ... and {len(rows) - MAX_REASON_ROWS} more reasons")
    return out


def clush_line(hosts: str, command: str) -> str:
    """``clush -w NODESET 'command'``, quoted for a POSIX shell."""
    return f"clush -w {shlex.quote(hosts)} {shlex.quote(command)}"


def format_steps(steps: list[Step], result: DiffResult) -> str:
    """``--plan-changes`` text: numbered steps, each saying whether it runs live or needs an
    outage, then one ``clush -w NODESET 'command'`` line per command (comments stay comments,
    ``plan_changes`` made a command that does not print one; ends with \n)."""
    out: list[str] = []
    if not steps:
        out.append("# nothing to change")
    last = 0
    for s in steps:
        if s.number != last:
            if out:
                out.append("")
            out.append(f"# step {s.number}: {s.title}")
            last = s.number
        out.append(f"# {s.hosts} ({_count(s.count, 'host')}): {s.outage or 'live'}")
        out.extend(c if c.startswith("#") else clush_line(s.hosts, c) for c in s.commands)
    if any(s.outage == SERVER_NET_OUTAGE for s in steps):
        out.append("")
        out.append(KEEP_NETS_HINT)
    skipped = []
    if result.missing_count:
        skipped.append(f"missing {result.missing}")
    if result.error_hosts:
        skipped.append(f"unreadable {result.error_hosts}")
    if skipped:
        out.append("")
        out.append(f"# not planned (no usable live state): {'; '.join(skipped)}")
        out.extend(f"# {line.strip()}" for line in _reason_lines(result))
    return "\n".join(printable(line) for line in out) + "\n"


def _route_dict(r: RouteEntry) -> dict[str, Any]:
    return {"net": r[0], "gateway": r[1], "hop": r[2], "priority": r[3]}


def _net_dicts(nets: tuple[NetEntry, ...]) -> list[dict[str, Any]]:
    return [{"net": n, "interfaces": list(i)} for n, i in nets]


def _rule_dict(r: Rule) -> dict[str, Any]:
    return {"src": r.src, "dst": r.dst, "rte": r.rte, "priority": r.priority}


def _group_dict(g: Group) -> dict[str, Any]:
    d = g.diff
    return {
        "hosts": g.hosts,
        "count": g.count,
        "role": d.role,
        "add_nets": _net_dicts(d.add_nets),
        "remove_nets": _net_dicts(d.remove_nets),
        "change_nets": [
            {"net": n, "live": list(h), "proposed": list(w)} for n, h, w in d.change_nets
        ],
        "nids": [{"net": n, "live": list(h), "inventory": w} for n, h, w in d.nids],
        "routing": d.routing or None,
        "tunables": [{"name": n, "live": h, "proposed": w} for n, h, w in d.tunables],
        "add_routes": [_route_dict(r) for r in d.add_routes],
        "add_udsp": [_rule_dict(r) for r in d.add_udsp],
        "remove_udsp": [{"idx": i, **_rule_dict(r)} for i, r in d.remove_udsp],
        "remove_routes": [_route_dict(r) for r in d.remove_routes],
        "change_routes": [
            {
                "net": r[0],
                "gateway": r[1],
                "live": {"hop": r[2], "priority": r[3]},
                "proposed": {"hop": r[4], "priority": r[5]},
            }
            for r in d.change_routes
        ],
    }


def _step_dict(s: Step) -> dict[str, Any]:
    return {
        "step": s.number,
        "title": s.title,
        "hosts": s.hosts,
        "count": s.count,
        "commands": list(s.commands),
        "live": not s.outage,
        "outage": s.outage or None,
        "clush": [clush_line(s.hosts, c) for c in s.commands if not c.startswith("#")],
    }


def to_dict(result: DiffResult, steps: list[Step] | None = None) -> dict[str, Any]:
    """The JSON form (``--format json``)."""
    doc: dict[str, Any] = {
        "site": result.site,
        "strategy": result.strategy,
        "live": result.live_path,
        "generated": result.generated,
        "differs": result.differs,
        "summary": {
            "compared": result.compared,
            "equal": result.equal_count,
            "differ": result.differ_count,
            "missing": result.missing_count,
            "unknown": len(result.unknown),
            "unreadable": len(result.errors),
        },
        "equal": result.equal,
        "groups": [_group_dict(g) for g in result.groups],
        "missing": result.missing,
        "missing_reasons": [
            {"hosts": h, "count": n, "reason": why} for h, n, why in result.missing_reasons
        ],
        "unknown": [{"host": h, "files": list(f)} for h, f in result.unknown],
        "errors": [d.as_dict() for d in result.errors],
        "health": [{"hosts": h, "count": n, "note": note} for h, n, note in result.health],
    }
    if steps is not None:
        doc["steps"] = [_step_dict(s) for s in steps]
        if any(s.outage == SERVER_NET_OUTAGE for s in steps):
            doc["notes"] = [KEEP_NETS_HINT.removeprefix("# ")]
    return doc
