"""``lnetgen diff``: the proposed plan against live dumps, per host, folded over node sets."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import click

from lnetgen.cli.common import (
    STRATEGY_OPT,
    TEXT,
    NonEmptyPath,
    as_input_error,
    force_option,
    handles_input_errors,
    plan_option,
    print_diags,
    progress_bars,
    quiet_option,
    site_argument,
)
from lnetgen.cli.nodesets import bounded_nodeset
from lnetgen.diagnostics import InputError

if TYPE_CHECKING:
    from lnetgen.live import LiveSet


@click.command("diff")
@site_argument
@STRATEGY_OPT
@plan_option
@force_option("use a --plan solved from another version of SITE")
@click.option(
    "--live",
    "live_path",
    type=NonEmptyPath(),
    required=True,
    metavar="PATH",
    help="directory of per-host dumps (<host>, <host>.yaml, <host>.conf, ...), one "
    "dump, or an `lnetgen generate` output directory",
)
@click.option(
    "--hosts",
    "scope",
    type=TEXT,
    default=None,
    callback=bounded_nodeset,
    metavar="NODESET",
    help="compare only these hosts: hosts outside are neither missing nor unknown "
    "(default: every host of the plan; for a single dump file, the host it names)",
)
@click.option(
    "--host",
    "host",
    type=TEXT,
    default=None,
    metavar="NAME",
    help="the host a single dump file belongs to (default: its file name, e.g. rtr01.yaml)",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option(
    "--plan-changes",
    is_flag=True,
    help="also print the changes as ordered steps, one `clush -w NODESET 'command'` line "
    "each, saying which steps are live and which need an outage",
)
@quiet_option
@handles_input_errors()
def command(
    site: str,
    strategy: str | None,
    plan_path: str | None,
    force: bool,
    live_path: str,
    scope: str | None,
    host: str | None,
    fmt: str,
    plan_changes: bool,
    quiet: bool,
) -> None:
    """Compare the plan for SITE (or the reviewed --plan) with the live LNet state in PATH.

    Dumps may be `lnetctl export [--backup]`, `lnetctl route show -v`, `lnetctl net show`,
    `lctl get_param -n routes`, `lctl show_route` or modprobe `options lnet` files; the
    format is detected from the content.  `lnetgen collect` gathers them.

    Exit status: 0 live equals the plan, 1 differences (or missing, unknown or unreadable
    dumps) or an invalid inventory, 2 bad input (unreadable PATH, bad --plan, usage).
    """
    from lnetgen.api import load_plan
    from lnetgen.diff import diff, format_steps, format_text, to_dict
    from lnetgen.diff import plan_changes as order
    from lnetgen.live import read_live

    hosts = _scope(scope)
    site_obj, plan, warnings = load_plan(site, strategy, plan_path, force=force)
    print_diags(warnings)
    try:
        live = read_live(live_path, progress=progress_bars(quiet))
    except InputError as exc:
        raise as_input_error(exc) from None
    single = not os.path.isdir(live_path)
    if host is not None:
        live = _rename(live, host, live_path, single)
    if hosts is None and single:
        hosts = set(live.hosts) | live.error_hosts
    result = diff(plan, live, site_obj, hosts=hosts)
    steps = order(result) if plan_changes else None
    if fmt == "json":
        click.echo(json.dumps(to_dict(result, steps), indent=1, sort_keys=True))
    else:
        click.echo(format_text(result), nl=False)
        if steps is not None:
            click.echo("")
            click.echo(format_steps(steps, result), nl=False)
    sys.exit(result.exit_code)


def _scope(text: str | None) -> set[str] | None:
    """The hosts of ``--hosts``, checked before anything is solved (as ``verify --hosts``):
    an empty or blank value (the type refuses it) or one that names no host (``,``) is a
    usage error naming the option, not a finding after seconds of solving."""
    from lnetgen import nodes

    if text is None:
        return None
    try:
        names = {n for n in nodes.expand(text) if n.strip()}
    except nodes.NodeSyntaxError as exc:
        raise click.BadParameter(
            f"{text!r} is not a node set: {exc}", param_hint="--hosts"
        ) from None
    if not names:
        raise click.BadParameter(f"{text!r} names no host", param_hint="--hosts")
    return names


def _rename(live: LiveSet, host: str, path: str, single: bool) -> LiveSet:
    """``live`` with its one host called ``host`` (``--host``)."""
    import dataclasses

    names = set(live.hosts) | live.error_hosts
    if not single or len(names) != 1:
        raise click.BadParameter(
            f"{path} is not a single dump file; --host names the host of one file",
            param_hint="--host",
        )
    return dataclasses.replace(
        live,
        hosts={host: state for state in live.hosts.values()},  # noqa: B035 (one host)
        files={host: files for files in live.files.values()},  # noqa: B035 (one host)
        error_hosts={host} if live.error_hosts else set(),
    )
