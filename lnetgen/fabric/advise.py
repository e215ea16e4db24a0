"""Which OpenSM settings help a fabric, measured: the candidates ``fabric check`` runs through
the real OpenSM on a simulated copy of each fabric (:func:`check`), and the verdict on them
(:func:`judge`): the best candidate, and what is wrong with what ``generate`` writes.

Candidates, each with ftree: no setting; lnetgen's guid files; the guid files with
``max_reverse_hops 1``; ``max_reverse_hops 1`` alone; the settings the inventory recorded
(``fabrics[].opensm``); on a compute fabric also the staggered IO port plan, with no setting and
with the recorded ones.  Each is run with the very files ``generate`` would write for it
(:func:`lnetgen.emit.opensm.fabric_files`).  A candidate's score is its busiest leaf uplink
against the best possible, over every switch of the fabric (lower is better); a candidate is
usable when OpenSM kept ftree, every host pair is routed and no credit loop is possible.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from lnetgen.emit.opensm import fabric_files, fabric_guids
from lnetgen.fabric.cabling import fabric_hosts, fabric_of, layout
from lnetgen.fabric.keep import Stage
from lnetgen.fabric.ports import apply_moves, plan_ports
from lnetgen.fabric.simulate import SimResult, simulate
from lnetgen.model import Fabric, OpenSMChoice, Site
from lnetgen.plan import Plan
from lnetgen.progress import NO_PROGRESS, Progress

#: Busiest leaf uplink allowed for what ``generate`` writes: 2x the best possible.
BOUND = 2.0
#: Scores closer than this are equal (route counts are integers; ratios print with 2 decimals).
_EPS = 0.005


@dataclass(frozen=True)
class Candidate:
    key: str
    title: str
    choice: OpenSMChoice
    port_plan: bool = False
    recorded: bool = False  # the inventory's fabrics[].opensm


@dataclass
class CheckRow:
    candidate: Candidate
    switch: str  # the switch (connected part of the fabric) simulated
    result: SimResult


@dataclass
class Verdict:
    """One fabric's measurements summed up."""

    fabric: str
    scores: dict[str, float]  # candidate key -> busiest uplink / best possible, all switches
    fallbacks: dict[str, list[str]]  # candidate key -> "switch: reason" where ftree fell back
    unhealthy: dict[str, list[str]]  # candidate key -> switches with unrouted pairs or a loop
    best: Candidate  # the usable settings candidate with the lowest score (ties: fewest settings)
    written: Candidate  # what generate writes: the recorded candidate, else "none"
    problems: list[str] = field(default_factory=list)  # why fabric check exits 1
    notes: list[str] = field(default_factory=list)
    # what the measured: text names (:func:`measured_text`): the OpenSM that ran, the plan a
    # storage fabric was judged on, the digest of the fabric and the best settings
    version: str = "OpenSM"
    plan: str | None = None
    digest: str = ""


def candidates(site: Site, fab: Fabric) -> list[Candidate]:
    """The settings measured on ``fab``, "none" first."""
    g = fabric_guids(site, fab)
    none = OpenSMChoice()
    files = OpenSMChoice(bool(g.io), bool(g.cn), bool(g.root), 0)
    out = [Candidate("none", "ftree, no guid files, max_reverse_hops 0", none)]
    if files != none:
        out.append(Candidate("guid-files", f"ftree + {files.label()}", files))
        mrh = replace(files, max_reverse_hops=1)
        out.append(Candidate("guid-files-mrh1", f"ftree + {mrh.label()}", mrh))
    alone = OpenSMChoice(max_reverse_hops=1)
    out.append(Candidate("mrh1", f"ftree + {alone.label()}, no guid files", alone))
    rec = fab.opensm
    if rec is not None:
        for i, c in enumerate(out):
            if c.choice == rec:
                out[i] = replace(c, recorded=True)
                break
        else:
            out.append(Candidate("recorded", f"ftree + {rec.label()}", rec, recorded=True))
    if fab.name == site.client_fabric:
        out.append(Candidate("port-plan", "staggered port plan, no setting", none, True))
        if rec is not None and rec != none:
            out.append(
                Candidate("port-plan-recorded", f"staggered port plan + {rec.label()}", rec, True)
            )
    return out


def checked_fabrics(site: Site, fabric: str | None) -> list[Fabric]:
    """The named fabric, or every fabric with hosts cabled to it."""
    if fabric:
        return [fabric_of(site, fabric)]
    out = []
    for fab in site.fabrics:
        if fabric_hosts(site, fab):
            out.append(fab)
    return out


def plan_pairs(plan: Plan) -> frozenset[tuple[str, str]]:
    """(router, server) names that exchange file data in ``plan``: a storage net's routers
    (primary and backup) with its servers.  On a storage fabric these are the only routes
    bulk data takes; under fine-grained routing most never leave their leaf module."""
    return frozenset(
        (r, s)
        for net in plan.networks
        if net.kind == "storage"
        for r in net.routers
        for s in net.servers
    )


def check(
    site: Site,
    fab: Fabric,
    only: set[str] | None = None,
    keep: Stage | None = None,
    progress: Progress = NO_PROGRESS,
    pairs: frozenset[tuple[str, str]] | None = None,
) -> list[CheckRow]:
    """Run every candidate (or those keyed in ``only``) on every switch of ``fab``: each switch
    is simulated on its own, because the inventory does not cable switches together.  With
    ``keep``, each simulation runs in ``<fabric>/<candidate>/<switch>`` of that staging tree
    (:mod:`lnetgen.fabric.keep`).  On a storage fabric, ``pairs`` (:func:`plan_pairs`) limits
    the routes counted and scored to those a plan uses; every router-server pair otherwise (a
    compute fabric counts every compute node with every IO node).  Raises ``SimError`` when a
    program is missing or fails."""
    hosts = fabric_hosts(site, fab)
    moves = plan_ports(site, hosts) if fab.name == site.client_fabric else []
    rows: list[CheckRow] = []
    chosen = [c for c in candidates(site, fab) if only is None or c.key in only]
    tick = progress(f"simulating {fab.name}", len(chosen))
    for cand in chosen:
        hs = apply_moves(hosts, moves) if cand.port_plan else hosts
        header = f"lnetgen fabric check ({cand.key})"
        files = fabric_files(site, fab, header, cand.choice, "@DIR@")
        for sw in fab.switches:
            part = [h for h in hs if h.attach.switch == sw.name]
            if not part:
                continue
            lay = layout(site, replace(fab, switches=(sw,)), part)
            sub, final = keep.sub(fab.name, cand.key, sw.name) if keep else (None, None)
            counted = pairs if fab.role == "storage" else None
            result = simulate(lay, files=files, keep=sub, keep_as=final, pairs=counted)
            rows.append(CheckRow(cand, sw.name, result))
        tick()
    return rows


def _usable(key: str, v: Verdict) -> bool:
    return not v.fallbacks.get(key) and not v.unhealthy.get(key)


def judge(fab: Fabric, rows: list[CheckRow]) -> Verdict:
    """Best candidate, and the problems of what ``generate`` writes for ``fab``:
    recorded settings worse than none or making ftree fall back, unrouted pairs, a possible
    credit loop, or a busiest uplink over :data:`BOUND`."""
    order: list[Candidate] = []
    scores: dict[str, float] = {}
    fallbacks: dict[str, list[str]] = {}
    unhealthy: dict[str, list[str]] = {}
    for row in rows:
        c, r = row.candidate, row.result
        if c not in order:
            order.append(c)
        scores[c.key] = max(scores.get(c.key, 0.0), r.forward.worst_ratio)
        if r.fallback:
            fallbacks.setdefault(c.key, []).append(f"{row.switch}: {r.fallback}")
        if r.health.unrouted or not r.health.cdg_acyclic:
            unhealthy.setdefault(c.key, []).append(row.switch)
    none = next(c for c in order if c.key == "none")
    written = next((c for c in order if c.recorded and not c.port_plan), none)
    v = Verdict(fab.name, scores, fallbacks, unhealthy, none, written)
    settings = [c for c in order if not c.port_plan and _usable(c.key, v)]
    if settings:
        v.best = min(settings, key=lambda c: (round(scores[c.key] / _EPS), order.index(c)))
    plan = [c for c in order if c.port_plan and _usable(c.key, v)]
    if plan and min(scores[c.key] for c in plan) < scores[v.best.key] - _EPS:
        p = min(plan, key=lambda c: scores[c.key])
        v.notes.append(
            f"recabling the IO nodes as `lnetgen fabric plan-ports` says ({p.title}) gives "
            f"{scores[p.key]:.2f}x"
        )
    what = "the recorded settings" if written.recorded else "ftree with no setting"
    if written.recorded and fallbacks.get(written.key):
        v.problems.append(
            f"{what} make OpenSM fall back from ftree on "
            f"{len(fallbacks[written.key])} switch(es): {fallbacks[written.key][0]}"
        )
    elif fallbacks.get("none"):
        v.notes.append(
            f"ftree falls back on {len(fallbacks['none'])} switch(es) of this fabric whatever "
            f"the settings ({fallbacks['none'][0]}); lnetgen writes no routing setting here"
        )
    spines = any(r.result.forward.spine for r in rows)  # not a fabric of top-of-rack switches
    if spines and not any(r.result.forward.uplink or r.result.backward.uplink for r in rows):
        v.notes.append(_nothing_crosses(fab))
    if unhealthy.get(written.key):
        v.problems.append(
            f"{what} leave host pairs unrouted or allow a credit loop on "
            + ", ".join(unhealthy[written.key])
        )
    if written.recorded and scores[written.key] > scores["none"] + _EPS:
        v.problems.append(
            f"the recorded settings ({written.choice.label()}) are worse than none: busiest "
            f"leaf uplink {scores[written.key]:.2f}x against {scores['none']:.2f}x"
        )
    if scores[written.key] > BOUND + _EPS and not fallbacks.get(written.key):
        v.problems.append(
            f"{what}: busiest leaf uplink {scores[written.key]:.2f}x the best possible "
            f"(limit {BOUND:.0f}x)"
        )
    return v


def _nothing_crosses(fab: Fabric) -> str:
    """The note of a fabric none of whose counted routes crosses a spine, saying which routes
    were counted (:func:`plan_pairs` on a storage fabric, compute x IO nodes on a compute
    one).  It said "no route between hosts that exchange data crosses a spine: OpenSM's
    settings change nothing here", but the check never traces the servers' own traffic on
    a storage fabric (OSS <-> MDS <-> MGS over the shared server net, which can cross) nor
    compute-to-compute traffic on a compute fabric: the settings may well change those."""
    if fab.role == "storage":
        return (
            "no route between a router and a server of one storage net of the plan crosses a "
            "spine on this fabric: OpenSM's settings change nothing for them (the only routes "
            "counted; server-to-server traffic, OSS <-> MDS <-> MGS, is not)"
        )
    return (
        "no route between a compute node and an IO node crosses a spine on this fabric: "
        "OpenSM's settings change nothing for them (the only routes counted; "
        "compute-to-compute traffic is not)"
    )


def advice(v: Verdict) -> str:
    """One line: which settings to record for the fabric (:func:`record_yaml` gives the YAML)."""
    if v.best.key == "none":
        return (
            f"fabric {v.fabric}: record no OpenSM setting (none measured better than ftree alone)"
        )
    c = v.best.choice
    if v.best.recorded:
        return (
            f"fabric {v.fabric}: keep the recorded settings ({c.label()}: "
            f"{v.scores[v.best.key]:.2f}x against {v.scores['none']:.2f}x with no setting)"
        )
    return (
        f"fabric {v.fabric}: record opensm: {{{', '.join(_fields(c))}}} "
        f"({v.scores[v.best.key]:.2f}x against {v.scores['none']:.2f}x with no setting)"
    )


def _fields(c: OpenSMChoice) -> list[str]:
    out = [
        f"{k}: true" for k in ("io_guid_file", "cn_guid_file", "root_guid_file") if getattr(c, k)
    ]
    out.append(f"max_reverse_hops: {c.max_reverse_hops}")
    return out


def measured_text(v: Verdict) -> str:
    """What the measurement of the best settings showed, for ``fabrics[].opensm.measured``:
    the OpenSM that ran (``v.version``, :func:`lnetgen.fabric.osmversion.opensm_version`), the
    plan whose routes a storage fabric was judged on (``v.plan``), the fabric and settings
    measured (``v.digest``, :func:`lnetgen.fabric.digest.fabric_digest`: the inventory check
    ties the record to it), and the busiest leaf uplink against the best possible with those
    settings and with none."""
    where = f", {v.plan} plan" if v.plan else ""
    which = f", fabric {v.digest}" if v.digest else ""
    return (
        f"fabric check, {v.version}{where}{which}: busiest leaf uplink "
        f"{v.scores[v.best.key]:.2f}x against {v.scores['none']:.2f}x with no setting"
    )


def record_yaml(v: Verdict) -> str:
    """The ``opensm:`` line to put in the fabric's inventory entry when :func:`advice` says
    to record or keep settings, ``measured:`` (:func:`measured_text`) included; "" when it
    says to record none."""
    if v.best.key == "none":
        return ""
    text = json.dumps(measured_text(v))  # a YAML double-quoted scalar
    return f"opensm: {{{', '.join(_fields(v.best.choice))}, measured: {text}}}"


__all__ = [
    "BOUND",
    "Candidate",
    "CheckRow",
    "Verdict",
    "advice",
    "candidates",
    "check",
    "checked_fabrics",
    "judge",
    "measured_text",
    "plan_pairs",
    "record_yaml",
]
