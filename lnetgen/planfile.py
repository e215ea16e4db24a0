"""Reading a reviewed ``plan.json`` back: its ``format_version``, and whether it still belongs
to the inventory it is applied with.

``read_plan`` turns a file into a ``Plan`` or a located ``UsageError`` (``E-PLAN``,
``E-PLAN-VERSION``).  A plan of either format is checked as the inventory is: its names
against the same definitions (``schemas/plan.schema.json`` holds the site schema's), nets and
NIDs parsed, integers bounded, node sets counted before they are expanded (at most
``MAX_CLIENTS`` names), no host, net or client class listed twice, one server route table per
storage net, no text with a control character, and its values fitting together as lnetgen
writes them (``lnetgen.planchecks``: client nets, NIs, route sets, routes); a hand-edited plan
is refused at the JSON path of its bad value, and nothing unprintable from it reaches a
terminal.  ``stale_plan`` says, when the plan's ``inventory_digest`` is not the inventory's,
what visibly changed between the two (site name, routers, servers, NIDs, clients); a plan that
names the digest must have the inventory's hosts and fit its torus.
Commands refuse a stale plan (``E-PLAN-STALE``, exit 2) unless told ``--force``.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from lnetgen import inputs, jsonloc, nodes, strictjson
from lnetgen.bounded import read_at_most
from lnetgen.diagnostics import Diagnostic, UsageError, json_path
from lnetgen.inventory.clients import MAX_CLIENTS
from lnetgen.inventory.lnet import oversized
from lnetgen.inventory.messages import clip, show
from lnetgen.model import Site
from lnetgen.plan import PLAN_FORMAT_VERSION, READABLE_PLAN_VERSIONS, Plan
from lnetgen.planchecks import JsonPath, check_meaning
from lnetgen.planchecks import bad as _bad
from lnetgen.planchecks import error as _error
from lnetgen.planproof import check_plan

#: A plan.json bigger than this is not read (Spider's nearest-neighbor plan: 5.7 MB in format 2,
#: ~300 MiB in format 1, which listed every class's whole route table).
MAX_PLAN_BYTES = 1 << 30
#: How many differences a stale-plan message names.
MAX_SHOWN = 6
PLAN_SCHEMA = "plan.schema.json"
#: Schema keywords that bound a value (not its type or spelling).
_RANGE = frozenset({"const", "enum", "minimum", "maximum"})


def read_plan(path: str) -> Plan:
    """The plan in ``path``; raises ``UsageError`` when it cannot be read, is not a plan or has
    a ``format_version`` this lnetgen cannot read (it reads 1, whose classes list their whole
    route tables, and 2, which folds them into route sets).  Each error about a value carries
    the line and column where the value is written (the file is scanned again for them only
    when there is an error to report)."""
    try:
        return _read_plan(path)
    except UsageError as exc:
        raise _located(path, exc) from None


def _located(path: str, exc: UsageError) -> UsageError:
    """``exc`` with the line and column of each diagnostic's JSON path in ``path``."""
    return UsageError(_locate(path, exc.diagnostics))


def _locate(path: str, diags: list[Diagnostic]) -> list[Diagnostic]:
    """``diags``, each about a value of the plan ``path`` given the line and column where the
    value is written; unchanged when the file cannot be read again or lacks the value."""
    if not any(d.file == path and not d.line and d.path != "$" for d in diags):
        return diags
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return diags
            text = read_at_most(fh, MAX_PLAN_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return diags
    return jsonloc.placed(diags, path, text)


def _read_plan(path: str) -> Plan:
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
        doc: Any = strictjson.loads(data.decode("utf-8"))
    except strictjson.JSONError as exc:
        message = f"not a plan.json (not JSON: {exc.msg})"
        diag = Diagnostic(path, exc.line, exc.col, "error", "E-PLAN", exc.path, message)
        raise UsageError([diag]) from None
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
    _check_unique(path, doc)
    _check_schema(path, doc, version)
    _check_text(path, doc)
    _check_nodesets(path, doc)
    _check_server_routes(path, doc)
    check_meaning(path, doc)
    try:
        return Plan.from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise _error(path, "E-PLAN", "$", f"not a plan.json: bad or missing {exc}") from None


def _check_unique(path: str, doc: dict[str, Any]) -> None:
    """No network, router, server or client class is listed twice (as in the inventory; a
    class's name names its output files).  Checked before the schema, which validates about
    2,000 routers a second: a plan listing its routers 20,000 times is refused at once, not
    after minutes."""
    for key in ("networks", "routers", "servers", "client_classes"):
        items = doc.get(key)
        seen: set[str] = set()
        for i, item in enumerate(items if isinstance(items, list) else ()):
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str):
                if name in seen:
                    raise _bad(path, (key, i, "name"), f"{show(name)} is listed twice")
                seen.add(name)


def _check_schema(path: str, doc: Any, version: int) -> None:
    """A plan against ``schemas/plan.schema.json`` (a plan of format 1 against its layout of
    format 1): a hand-edited plan with a wrong type or value (a null digest, a count written as
    text, a router name with a control character, a coordinate past 65535) is E-PLAN at its
    JSON path, not a traceback wherever the value is first used.  Patterns and integers are
    checked as in the inventory: anchored at the end of the text, and 1.0 is not an integer."""
    import jsonschema

    from lnetgen.inventory.schema import pattern_diag

    err = jsonschema.exceptions.best_match(_validator(version).iter_errors(_schema_view(doc)))
    if err is None:
        return
    if err.validator in ("oneOf", "anyOf") and err.context:
        if "description" in err.schema and all(e.validator in _RANGE for e in err.context):
            # a number in none of the ranges (a hop count of 0): the field's own words, not
            # what one of the ranges wanted
            message = f"{show(err.instance)} is outside {err.schema['description']}"
            raise _bad(path, tuple(err.absolute_path), message)
        err = jsonschema.exceptions.best_match(err.context)
    if err.validator == "pattern":
        _code, message, _hint = pattern_diag(str(err.validator_value), err.instance, "")
    else:
        message = clip(err.message, 300)
    raise _bad(path, tuple(err.absolute_path), message)


def _schema_view(doc: Any) -> Any:
    """``doc`` for the schema check, each class's ``route_sets`` that is a list of integers
    from 0 (what the schema asks of it) already checked here and left empty.  They are most of
    a large plan's values (Spider's nearest-neighbor plan: 562,155 of them), and the schema
    validator takes about 16 microseconds a value: 9 s to read that plan.  A list holding
    anything else is left for the schema to locate; ``_check_route_sets`` bounds them."""
    classes = doc.get("client_classes") if isinstance(doc, dict) else None
    if not isinstance(classes, list):
        return doc
    view = []
    for c in classes:
        sets = c.get("route_sets") if isinstance(c, dict) else None
        if isinstance(sets, list) and all(type(k) is int and k >= 0 for k in sets):
            c = {**c, "route_sets": []}
        view.append(c)
    return {**doc, "client_classes": view}


@cache
def _validator(version: int) -> Any:
    """The inventory's validator (anchored patterns, strict integers) on the plan schema."""
    import jsonschema

    from lnetgen import resources
    from lnetgen.inventory.schema import anchored_pattern, strict_int

    schema = resources.schema(PLAN_SCHEMA)
    defs = schema["$defs"]
    net, nid = defs["net"]["pattern"], defs["nid"]["pattern"]

    def pattern(validator: Any, want: str, instance: Any, where: Any) -> Iterator[Any]:
        """The inventory's pattern check; a net or NID that matches is then parsed as the
        inventory parses it (a known LND, a net number and a numeric address that fit)."""
        errors = list(anchored_pattern(validator, want, instance, where))
        yield from errors
        if not errors and want in (net, nid) and isinstance(instance, str):
            problem = _lnet_problem(instance, is_nid=want == nid)
            if problem:
                yield jsonschema.ValidationError(problem, validator="lnet")

    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(
        base,
        validators={"pattern": pattern},
        type_checker=base.TYPE_CHECKER.redefine("integer", strict_int),
    )
    schema = schema if version == PLAN_FORMAT_VERSION else _format_1(schema)
    return cls(_inline(schema, defs))


def _lnet_problem(text: str, *, is_nid: bool) -> str:
    """Why ``text`` is not a net name (written canonically, as lnetgen writes it: o2ib, not
    o2ib0) or a NID, as the inventory reads them; '' when it is one."""
    try:
        if is_nid:
            nid = nodes.parse_nid(text)
            return f"{text!r}: {nid.net.lnd} addresses are 32-bit numbers" if oversized(nid) else ""
        canonical = nodes.canonical_net(text)
    except nodes.NodeSyntaxError as exc:
        return clip(str(exc), 300)
    return "" if canonical == text else f"{text!r} is written {canonical} in a plan"


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with each ``$ref`` to ``#/$defs/`` replaced by its definition: a plan has
    hundreds of thousands of names, and looking each reference up costs a fifth of the check."""
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _inline(v, defs) for k, v in node.items() if k != "$ref"}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {**_inline(defs[ref.removeprefix("#/$defs/")], defs), **out}
    if ref is not None:
        out["$ref"] = ref
    return out


def _format_1(schema: dict[str, Any]) -> dict[str, Any]:
    """The layout of format 1: each client class lists its whole route table (``routes``),
    and there are no route sets."""
    out = copy.deepcopy(schema)
    props = out["properties"]
    props["format_version"] = {"const": 1}
    del props["route_sets"]
    out["required"] = [k for k in out["required"] if k != "route_sets"]
    item = props["client_classes"]["items"]
    del item["properties"]["route_sets"]
    item["properties"]["routes"] = {"type": "array", "items": {"$ref": "#/$defs/route"}}
    item["required"] = [k if k != "route_sets" else "routes" for k in item["required"]]
    return out


def _check_text(path: str, doc: dict[str, Any]) -> None:
    """Free text (a network's ``group`` and ``why``, anything in ``stats``) has no control
    character; the schema's patterns already hold every name to the inventory's."""
    todo: list[tuple[JsonPath, Any]] = [(("stats",), doc["stats"])]
    for i, net in enumerate(doc["networks"]):
        todo += [(("networks", i, k), net[k]) for k in ("group", "why") if k in net]
    while todo:
        where, value = todo.pop()
        if isinstance(value, str) and not value.isprintable():
            raise _bad(path, where, f"{show(value)} is not printable text (a control character)")
        if isinstance(value, dict):
            if not all(isinstance(k, str) and k.isprintable() for k in value):
                raise _bad(path, where, "a key here is not printable text (a control character)")
            todo += [((*where, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            todo += [((*where, k), v) for k, v in enumerate(value)]


def _check_nodesets(path: str, doc: dict[str, Any]) -> None:
    """Every client class names ``count`` host names, at most ``MAX_CLIENTS`` in all, counted
    before they are expanded (as the inventory bounds its node sets), and no client is in two
    classes (a client has one route table)."""
    room = MAX_CLIENTS
    seen: set[str] = set()
    for i, c in enumerate(doc["client_classes"]):
        names = _names(path, c["members"], ("client_classes", i, "members"), room)
        room -= len(names)
        twice = seen.intersection(names)
        if twice:
            where = ("client_classes", i, "members")
            first = nodes.fold(sorted(twice))
            raise _bad(path, where, f"{clip(first)} are members of an earlier class too")
        seen.update(names)
        if len(names) != c["count"]:
            raise _bad(
                path,
                ("client_classes", i, "count"),
                f"count {c['count']}, but its members name {len(names)} node(s)",
            )


def _check_server_routes(path: str, doc: dict[str, Any]) -> None:
    """``server_routes`` as lnetgen writes it: one route table per storage net, for exactly
    the servers of that net."""
    storage = {n["name"]: n["servers"] for n in doc["networks"] if n["kind"] == "storage"}
    seen: set[str] = set()
    room = MAX_CLIENTS
    for i, sr in enumerate(doc["server_routes"]):
        net = sr["net"]
        if net not in storage or net in seen:
            what = "a second route table for" if net in seen else "not a storage net of the plan:"
            raise _bad(path, ("server_routes", i, "net"), f"{what} {net}")
        seen.add(net)
        names = _names(path, sr["servers"], ("server_routes", i, "servers"), room)
        room -= len(names)
        if set(names) != set(storage[net]):
            raise _bad(
                path,
                ("server_routes", i, "servers"),
                f"{clip(sr['servers'])} are not the servers of {net} "
                f"({clip(nodes.fold(storage[net]))})",
            )
    missing = [n for n in storage if n not in seen]
    if missing:
        raise _bad(path, ("server_routes",), f"no route table for the servers of {missing[0]}")


def _names(path: str, text: str, where: JsonPath, room: int) -> list[str]:
    """The host names of a node set of at most ``room`` names."""
    bound = nodes.count(text)
    if bound > room:
        raise _bad(
            path,
            where,
            f"node set {show(text)} names about {bound:,} nodes; an inventory holds at most "
            f"{MAX_CLIENTS:,}",
        )
    try:
        names = nodes.expand(text)
    except ValueError as exc:  # NodeSyntaxError, or ClusterShell's own on e.g. 'n[1-1a---]'
        raise _bad(path, where, f"not a valid node set: {clip(str(exc))}") from None
    bad = next((n for n in names if not nodes.HOSTNAME_RE.match(n)), None)
    if bad is not None or not names:
        what = f"{show(bad)} is not safe as a host name" if bad is not None else "empty"
        raise _bad(path, where, f"node set {show(text)}: {what}")
    return names


def _changed(what: str, old: set[str], new: set[str]) -> list[str]:
    out = []
    if new - old:
        out.append(f"{what} added: {nodes.fold(sorted(new - old))}")
    if old - new:
        out.append(f"{what} removed: {nodes.fold(sorted(old - new))}")
    return out


def _planned_addresses(plan: Plan) -> dict[str, set[str]]:
    """Each router's and server's NID addresses, as the plan records them."""
    addrs = {r.name: {i.nid.rpartition("@")[0] for i in r.interfaces} for r in plan.routers}
    addrs.update({s.name: {i.nid.rpartition("@")[0] for i in s.interfaces} for s in plan.servers})
    return addrs


def _site_addresses(site: Site) -> dict[str, set[str]]:
    """Each router's and server's NID addresses, as the inventory gives them."""
    now = {
        r.name: {r.client_nid.rpartition("@")[0], *(x.ip for x in r.storage_ports)}
        for r in site.routers
    }
    now.update({s.name: {x.ip for x in s.ports} for s in site.servers})
    return now


def plan_changes(plan: Plan, site: Site) -> list[str]:
    """What differs between the hosts of ``plan`` and those of ``site`` (may be empty when the
    inventory changed elsewhere: topology, fabrics, strategy settings)."""
    out = []
    if plan.site != site.name:
        out.append(f"site {plan.site!r} in the plan, {site.name!r} in the inventory")
    out += _changed("routers", {r.name for r in plan.routers}, {r.name for r in site.routers})
    out += _changed("servers", {s.name for s in plan.servers}, {s.name for s in site.servers})
    addrs, now = _planned_addresses(plan), _site_addresses(site)
    moved = sorted(h for h in now if h in addrs and addrs[h] != now[h])
    if moved:
        out.append(f"NID addresses changed: {nodes.fold(moved)}")
    planned = sum(c.count for c in plan.client_classes)
    if planned != len(site.clients.names):
        out.append(f"clients: {planned} in the plan, {len(site.clients.names)} in the inventory")
    return out


def stale_plan(plan: Plan, site: Site, plan_path: str, *, force: bool) -> list[Diagnostic]:
    """Nothing when ``plan`` was solved from this very inventory.  Otherwise raises
    ``UsageError`` (``E-PLAN-STALE``) or, with ``force``, returns it as a warning.  A plan that
    is used (fresh, or forced) must also fit the inventory's torus and pass the guarantees the
    solver proves (``lnetgen.planproof``; ``E-PLAN``).  Each diagnostic names the line and
    column of its value in ``plan_path``."""
    try:
        return _locate(plan_path, _stale_plan(plan, site, plan_path, force=force))
    except UsageError as exc:
        raise _located(plan_path, exc) from None


def _stale_plan(plan: Plan, site: Site, plan_path: str, *, force: bool) -> list[Diagnostic]:
    if plan.inventory_digest == site.digest:
        _check_hosts(plan, site, plan_path)
        _check_torus(plan, site, plan_path)
        check_plan(plan, site, plan_path, MAX_PLAN_BYTES)
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
    _check_members(plan, site, plan_path, _forced)
    _check_torus(plan, site, plan_path)
    check_plan(plan, site, plan_path, MAX_PLAN_BYTES)
    return [diag]


def _check_hosts(plan: Plan, site: Site, plan_path: str) -> None:
    """A plan that names the inventory's digest has its site name, routers, servers, clients
    and NID addresses: a host renamed, dropped or readdressed by hand would reach the emitters,
    which look every host up (or would write a NID the inventory does not give)."""
    if plan.site != site.name:
        raise _edited(plan_path, ("site",), f"site {plan.site}, {site.file} is {site.name}")
    _check_members(plan, site, plan_path, _edited)
    for key, planned, known in (
        ("routers", [r.name for r in plan.routers], [r.name for r in site.routers]),
        ("servers", [s.name for s in plan.servers], [s.name for s in site.servers]),
    ):
        have = set(known)
        if len(planned) != len(have):
            missing = nodes.fold(sorted(have - set(planned)))
            raise _edited(plan_path, (key,), f"{clip(missing)} of {site.file} are missing")
    planned_clients = sum(c.count for c in plan.client_classes)
    if planned_clients != len(site.clients.names):
        message = f"{planned_clients} clients, {site.file} has {len(site.clients.names)}"
        raise _edited(plan_path, ("client_classes",), message)
    addrs, now = _planned_addresses(plan), _site_addresses(site)
    hosts: list[tuple[JsonPath, str]] = [
        (("routers", i, "interfaces"), r.name) for i, r in enumerate(plan.routers)
    ]
    hosts += [(("servers", i, "nid"), s.name) for i, s in enumerate(plan.servers)]
    for where, name in hosts:
        if addrs[name] != now[name]:
            message = (
                f"{name} has NID addresses {', '.join(sorted(addrs[name]))}, "
                f"{site.file} gives {', '.join(sorted(now[name]))}"
            )
            raise _edited(plan_path, where, message)


def _check_members(
    plan: Plan, site: Site, plan_path: str, refuse: Callable[[str, JsonPath, str], UsageError]
) -> None:
    """Every router, server and client ``plan`` names is a host of ``site``."""
    for key, planned, known in (
        ("routers", [r.name for r in plan.routers], [r.name for r in site.routers]),
        ("servers", [s.name for s in plan.servers], [s.name for s in site.servers]),
    ):
        have = set(known)
        stray = next((i for i, name in enumerate(planned) if name not in have), None)
        if stray is not None:
            raise refuse(plan_path, (key, stray, "name"), f"{planned[stray]} is not in {site.file}")
    clients = set(site.clients.names)
    for i, c in enumerate(plan.client_classes):
        stray_client = next((n for n in nodes.expand(c.members) if n not in clients), None)
        if stray_client is not None:
            where: JsonPath = ("client_classes", i, "members")
            raise refuse(plan_path, where, f"{stray_client} is not a client of {site.file}")


def _forced(plan_path: str, where: JsonPath, message: str) -> UsageError:
    return _error(
        plan_path,
        "E-PLAN-STALE",
        json_path(where),
        f"{message}: --force uses a stale plan only for the hosts the inventory still has "
        "(solve again)",
    )


def _edited(plan_path: str, where: JsonPath, message: str) -> UsageError:
    return _error(
        plan_path,
        "E-PLAN",
        json_path(where),
        f"{message}, though the plan names the inventory's digest (edited by hand? solve again)",
    )


def _check_torus(plan: Plan, site: Site, plan_path: str) -> None:
    """Every router of ``plan`` with a torus position is inside the inventory's torus (the
    schema bounds a coordinate by 65,535; the torus is known only with the inventory)."""
    if site.torus is None:
        return
    dims = site.torus.dims
    for i, r in enumerate(plan.routers):
        if r.coords is not None and any(c >= d for c, d in zip(r.coords, dims, strict=True)):
            raise _error(
                plan_path,
                "E-PLAN",
                json_path(("routers", i, "coords")),
                f"router {r.name} at {list(r.coords)} is outside the "
                f"{'x'.join(map(str, dims))} torus of {site.file}",
            )
