"""Which fabric and settings a recorded OpenSM measurement was made on: a digest written into
the ``measured:`` text ``fabric check`` prints (``fabric 3f9a0c12d4e5``), and checked against
the inventory on every load (W-OPENSM-STALE).

OpenSM's routes depend on the switches (their leaves, port counts, uplinks, spines and GUIDs),
on which host port sits on which switch port with which GUID, and on the settings; whether a
host is a compute node, an IO node or a server decides the guid files.  The digest covers
exactly these, and the recorded settings (``io_guid_file`` ... ``max_reverse_hops``): a leaf
added, a host recabled, an HCA or a spine replaced, or a setting changed by hand makes the
record stale.  A switch, leaf or host is known by its GUID, so what routing cannot see (the
names of the site, the fabric, switches, leaves and hosts, interfaces, rates, Lustre targets,
torus coordinates, the order of switches and hosts in the inventory) does not change the
digest -- except where a GUID is missing: lnetgen derives it from the names
(:func:`lnetgen.fabric.cabling.layout`), so there the names are part of the digest.
Switches are taken in the order of their identities (each is simulated on its own); a
director's leaves in their order (it numbers the uplinks to the spines).

A storage fabric is judged on the routes of one plan (``fabric check --strategy``), named in
the text (``groups plan``): a record whose plan is not the inventory's strategy, or that names
none, is stale too.  Which routers and servers a plan pairs on the same strategy and cabling is
not in the digest (it follows from the inventory's nets and coordinates; ``fabric check``
again is the way to know after such a change).  The digest and the plan are read
case-insensitively; a text naming several digests is judged by the first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from lnetgen.diagnostics import Diagnostic
from lnetgen.fabric.cabling import chip_guid, fabric_hosts, host_tag, leaf_tag, spine_tag
from lnetgen.fabric.graph import guid_int
from lnetgen.model import Fabric, OpenSMChoice, Site
from lnetgen.strategies import REGISTRY

#: Hex digits of the digest written: 48 bits tell one fabric from an edited copy of it.
DIGITS = 12
#: Bumped when what the digest covers changes, so that an old record reads as stale.
VERSION = 1
_DIGEST = re.compile(rf"\bfabric ([0-9a-f]{{{DIGITS}}})\b", re.IGNORECASE)
_PLAN = re.compile(
    r", (" + "|".join(re.escape(n) for n in sorted(REGISTRY, key=len, reverse=True)) + r") plan\b",
    re.IGNORECASE,
)

Ident = list[object]


def _ident(guid: str, tag: str) -> Ident:
    """A chip's or host's identity: its GUID, or (no GUID) the tag lnetgen derives one from
    (:func:`lnetgen.fabric.cabling.layout`)."""
    return ["guid", guid_int(guid)] if guid else ["derived", tag]


def fabric_digest(site: Site, fab: Fabric, settings: OpenSMChoice | None = None) -> str:
    """``DIGITS`` hex digits of the SHA-256 of ``fab`` as OpenSM would see it with
    ``settings`` (default: the recorded ones) -- see the module docstring."""
    s = settings if settings is not None else fab.opensm or OpenSMChoice()
    rows: list[object] = [
        ["lnetgen fabric digest", VERSION, fab.role],
        ["settings", s.io_guid_file, s.cn_guid_file, s.root_guid_file, s.max_reverse_hops],
    ]
    chips: dict[str, dict[str, Ident]] = {}
    switches = []
    for sw in fab.switches:
        chips[sw.name] = {
            lf.name: _ident(chip_guid(sw, lf), leaf_tag(fab, sw, lf)) for lf in sw.leaves
        }
        spines = [
            _ident(sw.spine_guids[k] if k < len(sw.spine_guids) else "", spine_tag(fab, sw, k))
            for k in range(sw.spines)
        ]
        leaves = [[chips[sw.name][lf.name], lf.ports, lf.uplinks] for lf in sw.leaves]
        chassis = guid_int(sw.guid) if sw.guid else 0
        switches.append(["switch", sw.kind, chassis, sw.spines, spines, leaves])
    rows.extend(sorted(switches, key=json.dumps))
    hosts = []
    for h in fabric_hosts(site, fab):
        who = _ident(f"{h.guid:x}" if h.guid else "", host_tag(fab, h))
        hosts.append(["host", chips[h.attach.switch][h.attach.leaf], h.attach.port, h.kind, who])
    rows.extend(sorted(hosts, key=json.dumps))
    text = json.dumps(rows, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGITS]


def recorded_digest(measured: str) -> str | None:
    """The fabric digest a ``measured:`` text names (lower case), or None."""
    m = _DIGEST.search(measured)
    return m.group(1).lower() if m else None


def recorded_plan(measured: str) -> str | None:
    """The strategy a storage fabric's ``measured:`` text was judged on (``, groups plan``;
    only the names of lnetgen's strategies), or None."""
    m = _PLAN.search(measured)
    return m.group(1).lower() if m else None


def _stale(site: Site, i: int, fab: Fabric, message: str) -> Diagnostic:
    return Diagnostic(
        site.file,
        0,
        0,
        "warning",
        "W-OPENSM-STALE",
        f"$.fabrics[{i}].opensm.measured",
        f"fabric {fab.name}: {message}; generate still writes the recorded settings",
        hint=f"measure again: `lnetgen fabric check {site.file} --fabric {fab.name}` prints "
        "the opensm line to record",
    )


def _problems(site: Site, fab: Fabric, measured: str) -> Iterable[str]:
    got, now = recorded_digest(measured), fabric_digest(site, fab)
    if got is None:
        yield (
            "the measurement names no fabric digest, so whether this is the fabric and the "
            f"settings it was made on cannot be told (this is fabric {now})"
        )
    elif got != now:
        yield (
            f"the fabric or its recorded settings changed since the measurement: it was made "
            f"on fabric {got}, this is fabric {now} (a switch, a leaf, a host's port, a GUID or "
            "a setting differs)"
        )
    if fab.role != "storage":
        return
    plan, want = recorded_plan(measured), site.strategy.default
    if plan is None:
        yield (
            "the measurement names no plan, so whether it counted the routes of the "
            f"inventory's strategy ({want}) cannot be told"
        )
    elif plan != want:
        yield (
            f"the measurement counted the routes of the {plan} plan, not of the inventory's "
            f"strategy ({want})"
        )


def tied(site: Site, fab: Fabric) -> bool:
    """``fab`` records OpenSM settings with a measurement of this very fabric and settings
    (and, a storage fabric, of the inventory's plan): nothing for W-OPENSM-STALE to say."""
    rec = fab.opensm
    return rec is not None and bool(rec.measured) and not any(_problems(site, fab, rec.measured))


def record_findings(site: Site) -> list[Diagnostic]:
    """W-OPENSM-STALE for each fabric whose recorded ``measured:`` text cannot be tied to the
    fabric and settings the inventory describes now: it names no digest, another digest, or
    (a storage fabric) no plan or another plan than the inventory's strategy.  Settings
    recorded with no text at all are W-OPENSM-UNMEASURED (the inventory's own check)."""
    out: list[Diagnostic] = []
    for i, fab in enumerate(site.fabrics):
        rec = fab.opensm
        if rec is not None and rec.measured:
            out.extend(_stale(site, i, fab, msg) for msg in _problems(site, fab, rec.measured))
    return out


__all__ = [
    "DIGITS",
    "VERSION",
    "fabric_digest",
    "record_findings",
    "recorded_digest",
    "recorded_plan",
    "tied",
]
