"""Which fabric a recorded OpenSM measurement was made on: a digest of the fabric as cabled,
written into the ``measured:`` text ``fabric check`` prints (``fabric 3f9a0c12d4e5``), and
checked against the inventory on every load (W-OPENSM-STALE).

OpenSM's routes depend on the switches (their leaves, port counts, uplinks, spines and GUIDs)
and on which host sits on which port with which GUID; whether a host is a compute node, an IO
node or a server decides the guid files.  The digest covers exactly these, so a leaf added, a
host moved or recabled, a GUID replaced or a router added makes the record stale, while what
routing cannot see (names of the site and the fabric, rates, Lustre targets, torus
coordinates) does not.  Switches are taken in name order (each is simulated on its own); a
director's leaves in their order (it numbers the uplinks to the spines).

A storage fabric is judged on the routes of one plan (``fabric check --strategy``), named in
the text (``groups plan``): a record whose plan is not the inventory's strategy is stale too.
Which routers and servers a plan pairs on the same strategy and cabling is not in the digest
(it follows from the inventory's nets and coordinates; ``fabric check`` again is the way to
know after such a change).
"""

from __future__ import annotations

import hashlib
import json
import re

from lnetgen.diagnostics import Diagnostic
from lnetgen.fabric.cabling import fabric_hosts
from lnetgen.fabric.graph import guid_int
from lnetgen.model import Fabric, Site

#: Hex digits of the digest written: 48 bits tell one fabric from an edited copy of it.
DIGITS = 12
#: Bumped when what the digest covers changes, so that an old record reads as stale.
VERSION = 1
_DIGEST = re.compile(rf"\bfabric ([0-9a-f]{{{DIGITS}}})\b")
_PLAN = re.compile(r", ([a-z0-9][a-z0-9-]*) plan\b")


def _guid(text: str) -> int:
    return guid_int(text) if text else 0


def fabric_digest(site: Site, fab: Fabric) -> str:
    """``DIGITS`` hex digits of the SHA-256 of ``fab`` as OpenSM would see it (module
    docstring)."""
    rows: list[object] = [["lnetgen fabric digest", VERSION, fab.role]]
    for sw in sorted(fab.switches, key=lambda s: s.name):
        leaves = [[lf.name, lf.ports, lf.uplinks, _guid(lf.guid)] for lf in sw.leaves]
        spines = [_guid(g) for g in sw.spine_guids]
        rows.append(["switch", sw.name, sw.kind, _guid(sw.guid), sw.spines, spines, leaves])
    hosts = sorted(
        (h.attach.switch, h.attach.leaf, h.attach.port, h.kind, h.name, h.interface, h.guid)
        for h in fabric_hosts(site, fab)
    )
    rows.extend(["host", *h] for h in hosts)
    text = json.dumps(rows, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGITS]


def recorded_digest(measured: str) -> str | None:
    """The fabric digest a ``measured:`` text names, or None."""
    m = _DIGEST.search(measured)
    return m.group(1) if m else None


def recorded_plan(measured: str) -> str | None:
    """The plan (strategy) a storage fabric's ``measured:`` text was judged on, or None."""
    m = _PLAN.search(measured)
    return m.group(1) if m else None


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


def record_findings(site: Site) -> list[Diagnostic]:
    """W-OPENSM-STALE for each fabric whose recorded ``measured:`` text cannot be tied to the
    fabric the inventory describes now: it names no digest, another digest, or (a storage
    fabric) another plan than the inventory's strategy.  Settings recorded with no text at
    all are W-OPENSM-UNMEASURED (the inventory's own check)."""
    out: list[Diagnostic] = []
    for i, fab in enumerate(site.fabrics):
        rec = fab.opensm
        if rec is None or not rec.measured:
            continue
        got, now = recorded_digest(rec.measured), fabric_digest(site, fab)
        if got is None:
            msg = (
                "the measurement names no fabric digest, so whether this is the fabric it was "
                f"made on cannot be told (this fabric is {now})"
            )
            out.append(_stale(site, i, fab, msg))
        elif got != now:
            msg = (
                f"the fabric changed since the measurement: it was made on fabric {got}, this "
                f"is fabric {now} (a switch, a leaf, a host's port or a GUID differs)"
            )
            out.append(_stale(site, i, fab, msg))
        plan = recorded_plan(rec.measured) if fab.role == "storage" else None
        if plan is not None and plan != site.strategy.default:
            msg = (
                f"the measurement counted the routes of the {plan} plan, not of the "
                f"inventory's strategy ({site.strategy.default})"
            )
            out.append(_stale(site, i, fab, msg))
    return out


__all__ = [
    "DIGITS",
    "VERSION",
    "fabric_digest",
    "record_findings",
    "recorded_digest",
    "recorded_plan",
]
