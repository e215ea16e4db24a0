"""Reading a reviewed ``plan.json`` back: its ``format_version``, and whether it still belongs
to the inventory it is applied with.

``read_plan`` turns a file into a ``Plan`` or a located ``UsageError`` (``E-PLAN``,
``E-PLAN-VERSION``); ``stale_plan`` says, when the plan's ``inventory_digest`` is not the
inventory's, what visibly changed between the two (site name, routers, servers, NIDs, clients).
Commands refuse a stale plan (``E-PLAN-STALE``, exit 2) unless told ``--force``.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from lnetgen import inputs, nodes
from lnetgen.bounded import read_at_most
from lnetgen.diagnostics import Diagnostic, UsageError
from lnetgen.model import Site
from lnetgen.plan import PLAN_FORMAT_VERSION, READABLE_PLAN_VERSIONS, Plan

#: A plan.json bigger than this is not read (a nearest-neighbor plan of spider is ~300 MiB).
MAX_PLAN_BYTES = 1 << 30
#: How many differences a stale-plan message names.
MAX_SHOWN = 6


def _error(path: str, code: str, json_path: str, message: str) -> UsageError:
    return UsageError([Diagnostic(path, 0, 0, "error", code, json_path, message)])


def read_plan(path: str) -> Plan:
    """The plan in ``path``; raises ``UsageError`` when it cannot be read, is not a plan or has
    a ``format_version`` this lnetgen cannot read (it reads 1, whose classes list their whole
    route tables, and 2, which folds them into route sets)."""
    try:
        # non-blocking: a named pipe would wait for a writer for ever; /dev/zero never ends
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                raise _error(path, "E-PLAN", "$", f"{what}: a plan is a plan.json file")
            if st.st_size > MAX_PLAN_BYTES:
                raise _error(path, "E-PLAN", "$", f"larger than {MAX_PLAN_BYTES >> 20} MiB")
            data = read_at_most(fh, MAX_PLAN_BYTES)
            inputs.remember(st)
    except OSError as exc:
        raise _error(path, "E-PLAN", "$", f"cannot read the plan: {exc.strerror}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise _error(path, "E-PLAN", "$", f"larger than {MAX_PLAN_BYTES >> 20} MiB")
    try:
        doc: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _error(path, "E-PLAN", "$", f"not a plan.json (not JSON: {exc})") from None
    except RecursionError:
        raise _error(path, "E-PLAN", "$", "not a plan.json (nested too deeply)") from None
    if not isinstance(doc, dict) or "client_classes" not in doc:
        raise _error(path, "E-PLAN", "$", "not a plan.json (from `lnetgen solve --out`)")
    version = doc.get("format_version")
    if version not in READABLE_PLAN_VERSIONS or isinstance(version, bool):
        found = "none" if version is None else repr(version)
        raise _error(
            path,
            "E-PLAN-VERSION",
            "$.format_version",
            f"plan format version {found}; this lnetgen reads versions "
            f"{', '.join(map(str, READABLE_PLAN_VERSIONS))} (writes {PLAN_FORMAT_VERSION}): "
            "solve the inventory again",
        )
    if version == PLAN_FORMAT_VERSION:
        _check_schema(path, doc)
    try:
        return Plan.from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise _error(path, "E-PLAN", "$", f"not a plan.json: bad or missing {exc}") from None


def _check_schema(path: str, doc: Any) -> None:
    """A plan of the current format against ``schemas/plan.schema.json``: a hand-edited plan
    with a wrong type or value (a null digest, a count written as text) is E-PLAN at its JSON
    path, not a traceback wherever the value is first used."""
    import jsonschema

    from lnetgen import resources
    from lnetgen.diagnostics import json_path

    validator = jsonschema.Draft202012Validator(resources.schema("plan.schema.json"))
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is not None:
        where = json_path(tuple(err.absolute_path))
        raise _error(path, "E-PLAN", where, f"not a plan lnetgen wrote: {err.message[:300]}")


def _changed(what: str, old: set[str], new: set[str]) -> list[str]:
    out = []
    if new - old:
        out.append(f"{what} added: {nodes.fold(sorted(new - old))}")
    if old - new:
        out.append(f"{what} removed: {nodes.fold(sorted(old - new))}")
    return out


def plan_changes(plan: Plan, site: Site) -> list[str]:
    """What differs between the hosts of ``plan`` and those of ``site`` (may be empty when the
    inventory changed elsewhere: topology, fabrics, strategy settings)."""
    out = []
    if plan.site != site.name:
        out.append(f"site {plan.site!r} in the plan, {site.name!r} in the inventory")
    out += _changed("routers", {r.name for r in plan.routers}, {r.name for r in site.routers})
    out += _changed("servers", {s.name for s in plan.servers}, {s.name for s in site.servers})
    addrs = {r.name: {i.nid.rpartition("@")[0] for i in r.interfaces} for r in plan.routers}
    addrs.update({s.name: {i.nid.rpartition("@")[0] for i in s.interfaces} for s in plan.servers})
    now = {
        r.name: {r.client_nid.rpartition("@")[0], *(x.ip for x in r.storage_ports)}
        for r in site.routers
    }
    now.update({s.name: {x.ip for x in s.ports} for s in site.servers})
    moved = sorted(h for h in now if h in addrs and addrs[h] != now[h])
    if moved:
        out.append(f"NID addresses changed: {nodes.fold(moved)}")
    planned = sum(c.count for c in plan.client_classes)
    if planned != len(site.clients.names):
        out.append(f"clients: {planned} in the plan, {len(site.clients.names)} in the inventory")
    return out


def stale_plan(plan: Plan, site: Site, plan_path: str, *, force: bool) -> list[Diagnostic]:
    """Nothing when ``plan`` was solved from this very inventory.  Otherwise raises
    ``UsageError`` (``E-PLAN-STALE``) or, with ``force``, returns it as a warning."""
    if plan.inventory_digest == site.digest:
        return []
    changes = plan_changes(plan, site)
    what = (
        "; ".join(changes[:MAX_SHOWN])
        if changes
        else (
            "the same hosts and NIDs; another part of the inventory changed (topology, fabrics, "
            "file systems or strategy settings)"
        )
    )
    message = (
        f"the plan was solved from another version of {site.file} "
        f"(plan sha256:{plan.inventory_digest[:12]}, inventory now sha256:"
        f"{site.digest[:12]}): {what}"
    )
    diag = Diagnostic(
        plan_path,
        0,
        0,
        "warning" if force else "error",
        "W-PLAN-STALE" if force else "E-PLAN-STALE",
        "$.inventory_digest",
        message,
        hint="" if force else "solve again, or give --force to use the plan anyway",
    )
    if not force:
        raise UsageError([diag])
    return [diag]
