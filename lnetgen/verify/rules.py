"""UDSP rules in ``verify``: a generated tree's client classes take theirs from their UDSP
scripts (``udsp/<class>.sh``, listed in the manifest), not from the lnetctl files, which carry
none (``lnetgen.udsp``); and a rule the kernel keeps but never applies (``Rule.dead``: a router
rule with a priority action, in an lnetctl file or a dump) is a finding, at its line.

Only working router rules rank gateways (``lnetgen.udsp.working``, ``verify.reach``); one that
prefers no gateway of the endpoint's routes to its net does nothing, also a finding."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence

from lnetgen.diagnostics import json_path
from lnetgen.live import LiveParseError
from lnetgen.live.udsp_file import UDSP_FORMAT, read_rules
from lnetgen.udsp import Rule, matches, working
from lnetgen.verify.findings import Collector
from lnetgen.verify.locate import Locator
from lnetgen.verify.manifest import LNET_FORMATS, Manifest
from lnetgen.verify.reach import RouteVerdict
from lnetgen.verify.world import Endpoint, World

#: A rule the kernel never applies (see the module docstring; a warning of ``verify.findings``).
DEAD = "V-UDSP-DEAD"


def with_scripts(world: World, manifest: Manifest, out: Collector) -> None:
    """Give each endpoint read from a file of the generated tree of ``manifest`` the rules of
    its UDSP script (the script deletes every rule before it adds its own); a script that
    cannot be read is reported into ``out`` and leaves the endpoint's rules unknown.  An
    endpoint whose rules came with its state (a live dump, a tree read as live) is kept."""
    root = os.path.dirname(manifest.path)
    scripts = {e.hosts: e.path for e in manifest.entries if e.format == UDSP_FORMAT}
    if not scripts:
        return
    hosts_of = {
        os.path.join(root, e.path): e.hosts for e in manifest.entries if e.format in LNET_FORMATS
    }
    read: dict[str, tuple[Rule, ...] | None] = {}
    for name, ep in sorted(world.endpoints.items()):
        rel = scripts.get(hosts_of.get(ep.file, ""))
        if rel is None or ep.state.udsp_file:
            continue
        full = os.path.join(root, rel)
        if full not in read:
            try:
                read[full] = read_rules(full, root)
            except LiveParseError as exc:
                out.extend([exc.diagnostic])
                read[full] = None
        state = dataclasses.replace(ep.state, udsp=read[full], udsp_file=full)
        world.endpoints[name] = dataclasses.replace(ep, state=state)


def dead_rules(ep: Endpoint, out: Collector) -> None:
    """``V-UDSP-DEAD`` (a warning) for each rule of ``ep`` the kernel never applies, at its
    line in the file it was read from."""
    file = ep.state.udsp_file or ep.file
    for k, rule in enumerate(ep.state.udsp or ()):
        if not rule.dead:
            continue
        path = json_path(("udsp", k)) if not ep.state.udsp_file else "$"
        message = (
            f"{ep.name}: UDSP rule {rule.options()} is never applied: the kernel applies a "
            "rule with --dst and --rte only without a priority action (lnetctl import cannot "
            "make one; 'lnetgen diff --plan-changes' replaces it)"
        )
        out.add(DEAD, file, rule.line, 1 if rule.line else 0, path, message)


def idle_rules(
    loc: Locator, out: Collector, ep: Endpoint, verdicts: Mapping[str, Sequence[RouteVerdict]]
) -> None:
    """V-UDSP-NO-ROUTE for each working UDSP router rule of ``ep`` that prefers no gateway of
    its routes to the rule's net (the rule does nothing), at its line when known."""
    for rule in working(ep.state.udsp or ()):
        gws = [v.gateway for v in verdicts.get(rule.dst, ())]
        if not any(matches(rule.rte, g) for g in gws):
            file = ep.state.udsp_file or ep.file
            place = loc.section(file, "udsp") if not rule.line else None
            out.add(
                "V-UDSP-NO-ROUTE",
                file,
                place.line if place is not None else rule.line,
                place.col if place is not None else 1,
                place.path if place is not None else "$",
                f"{ep.name}: UDSP rule --dst {rule.dst} --rte {rule.rte} prefers no gateway "
                f"of its routes to {rule.dst}",
            )


__all__ = ["DEAD", "dead_rules", "idle_rules", "with_scripts"]
