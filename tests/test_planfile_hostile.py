"""A hand-edited or hostile plan.json given to ``--plan`` is refused with ``E-PLAN`` at the
JSON path of its bad value (exit 2): never a traceback, never a node set expanded before it is
counted, never a control character from the plan printed to the terminal.  Each test names a
kind of value that used to get through the plan reader.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lnetgen import nodes
from lnetgen.cli import main
from lnetgen.diagnostics import UsageError
from lnetgen.inventory.clients import MAX_CLIENTS
from lnetgen.planfile import read_plan
from lnetgen.resources import schema

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")
HOSTILE = "\x1b[31m\u202e"
#: What a terminal would act on: C0 and C1 controls, DEL, bidi overrides and isolates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
COMMANDS = (
    ("place", "clients", DEMO, "--oss", "oss01"),
    ("place", "osts", DEMO, "--client", "nid00001", "--fs", "scratch"),
    ("advise", "stripes", DEMO, "--fs", "scratch", "--job", "nid[00001-00010]"),
)

Doc = dict[str, Any]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """The demo site's plan (groups) as lnetgen writes it."""
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    assert run("solve", DEMO, "--out", str(path)).exit_code == 0
    doc: Doc = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _write(
    tmp_path: Path, solved: Doc, edit: Callable[[Doc], object], name: str = "plan.json"
) -> Path:
    doc = copy.deepcopy(solved)
    edit(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _at(plan: Path, code: str, where: str) -> re.Pattern[str]:
    """The head of a diagnostic about ``where`` in ``plan``, at a line and column where the
    value is written (they used to be left out)."""
    return re.compile(
        rf"{re.escape(str(plan))}:[1-9]\d*:[1-9]\d*: error\[{code}\] {re.escape(where)}: "
    )


def _refused(plan: Path, where: str, commands: tuple[tuple[str, ...], ...] = COMMANDS) -> None:
    """Every command refuses ``plan`` with E-PLAN at ``where``, exit 2, nothing unprintable."""
    for cmd in commands:
        r = run(*cmd, "--plan", str(plan))
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
        assert r.exit_code == 2, (cmd, r.output)
        assert _at(plan, "E-PLAN", where).search(r.output), (cmd, r.output)
        assert not CONTROL.search(r.output), (cmd, r.output)


def _storage(doc: Doc) -> Doc:
    net: Doc = next(n for n in doc["networks"] if n["kind"] == "storage")
    return net


def _set(*keys: str | int, value: object) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        target: Any = doc
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value

    return edit


def test_every_plan_lnetgen_writes_is_read(solved: Doc, tmp_path: Path) -> None:
    """The checks refuse nothing lnetgen writes: every strategy's plan of the demo is read."""
    for strategy in ("groups", "projection", "round-robin", "nearest-neighbor", "baseline"):
        path = tmp_path / f"{strategy}.json"
        assert run("solve", DEMO, "-s", strategy, "--out", str(path)).exit_code == 0
        assert read_plan(str(path)).strategy == strategy


def test_the_plan_schema_holds_the_inventorys_names() -> None:
    """Plan names are checked by the very definitions the inventory uses, copied verbatim."""
    plan, site = schema("plan.schema.json")["$defs"], schema("site.schema.json")["$defs"]
    for name in ("hostname", "name", "fsname", "interface", "net"):
        assert plan[name] == site[name], name
    props = schema("plan.schema.json")["properties"]
    count = props["client_classes"]["items"]["properties"]["count"]
    assert count["maximum"] == MAX_CLIENTS


@pytest.mark.parametrize(
    ("keys", "where"),
    [
        (("client_classes", 0, "count"), "$.client_classes[0].count"),
        (("routers", 0, "coords", 0), "$.routers[0].coords[0]"),
        (("route_sets", 0, "routes", 0, "priority"), "$.route_sets[0].routes[0].priority"),
        (("client_classes", 0, "route_sets", 0), "$.client_classes[0].route_sets[0]"),
    ],
)
def test_an_integer_past_64_bits_is_refused(
    solved: Doc, tmp_path: Path, keys: tuple[str | int, ...], where: str
) -> None:
    """10**30 as a count, a coordinate or a route priority ended in numpy's OverflowError; as a
    route-set index it was 'bad or missing' somewhere in $."""
    _refused(_write(tmp_path, solved, _set(*keys, value=10**30)), where)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda d: d["routers"][0].update(name=HOSTILE), "$.routers[0].name"),
        (lambda d: _storage(d).update(name=HOSTILE), "$.networks[1].name"),
        (lambda d: d["servers"][0].update(name=HOSTILE), "$.servers[0].name"),
        (
            lambda d: d["client_classes"][0].update(interface=HOSTILE),
            "$.client_classes[0].interface",
        ),
        (lambda d: d["client_classes"][0].update(net=HOSTILE), "$.client_classes[0].net"),
        (lambda d: d["client_classes"][0].update(members=HOSTILE), "$.client_classes[0].members"),
        (
            lambda d: d["routers"][0]["interfaces"][0].update(nid=HOSTILE),
            "$.routers[0].interfaces[0].nid",
        ),
        (lambda d: d.update(site=HOSTILE), "$.site"),
        (lambda d: d.update(inventory_digest=HOSTILE), "$.inventory_digest"),
        (lambda d: _storage(d).update(why=HOSTILE), "$.networks[1].why"),
        (lambda d: d["stats"].update({HOSTILE: 1}), "$.stats"),
    ],
)
def test_a_control_character_in_a_name_is_refused_and_never_echoed(
    solved: Doc, tmp_path: Path, edit: Callable[[Doc], None], where: str
) -> None:
    """An ANSI escape and a bidi override as a router, net or server name reached the terminal
    raw (a stale-plan message, a placement, a diff) or a traceback; a plan's names are now the
    inventory's kinds of names, and its free text is printable."""
    _refused(_write(tmp_path, solved, edit), where)


def test_a_huge_node_set_is_counted_before_it_is_expanded(
    solved: Doc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Client class members ``nid[0000000001-9999999999]`` gave a traceback; a set of a few
    million names was built in memory before anything looked at its size."""
    expanded: list[str] = []
    real = nodes.expand

    def expand(text: str) -> list[str]:
        expanded.append(text)
        return real(text)

    monkeypatch.setattr(nodes, "expand", expand)
    for members in ("nid[0000000001-9999999999]", f"nid[1-{MAX_CLIENTS + 1}]"):
        path = _write(tmp_path, solved, _set("client_classes", 0, "members", value=members))
        with pytest.raises(UsageError, match=r"client_classes\[0\]\.members.*names about"):
            read_plan(str(path))
        assert members not in expanded
    monkeypatch.undo()
    path = _write(tmp_path, solved, _set("client_classes", 0, "members", value=HOSTILE))
    _refused(path, "$.client_classes[0].members")


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (_set("client_classes", 0, "count", value=10**12), "$.client_classes[0].count"),
        (_set("client_classes", 0, "count", value=95), "$.client_classes[0].count"),
        (_set("route_sets", 0, "count", value=10**12), "$.route_sets[0].count"),
    ],
)
def test_a_count_that_is_not_its_members_is_refused(
    solved: Doc, tmp_path: Path, edit: Callable[[Doc], None], where: str
) -> None:
    """A class of 10**12 clients (members 96 of them) was applied as if it were true."""
    _refused(_write(tmp_path, solved, edit), where)


@pytest.mark.parametrize(
    ("value", "where"),
    [(-1, "$.routers[0].coords[1]"), (-5, "$.routers[0].coords[1]"), (4, "$.routers[0].coords")],
)
def test_a_coordinate_outside_the_torus_is_refused(
    solved: Doc, tmp_path: Path, value: int, where: str
) -> None:
    """A router at torus position -5 (or 4, on the demo's 4x4x4 torus) ended in a ValueError
    from the link-load analysis."""
    _refused(_write(tmp_path, solved, _set("routers", 0, "coords", 1, value=value)), where)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (_set("server_routes", value=[]), "$.server_routes"),
        (lambda d: d["server_routes"].pop(), "$.server_routes"),
        (lambda d: d["server_routes"].append(d["server_routes"][0]), "$.server_routes[6].net"),
        (_set("server_routes", 0, "net", value="gni"), "$.server_routes[0].net"),
        (_set("server_routes", 0, "servers", value="oss01"), "$.server_routes[0].servers"),
        (_set("server_routes", 0, "servers", value=""), "$.server_routes[0].servers"),
        (_set("servers", value=[]), "$.servers"),
        (_set("client_classes", value=[]), "$.client_classes"),
    ],
)
def test_server_routes_of_another_shape_are_refused(
    solved: Doc, tmp_path: Path, edit: Callable[[Doc], None], where: str
) -> None:
    """lnetgen writes one server route table per storage net, for exactly that net's servers;
    a plan without them (or without servers or client classes) ended in an IndexError."""
    _refused(_write(tmp_path, solved, edit), where)


@pytest.mark.parametrize(
    ("key", "where"),
    [
        ("routers", "$.routers[20].name"),
        ("networks", "$.networks[8].name"),
        ("servers", "$.servers[14].name"),
    ],
)
def test_a_host_or_net_listed_twice_is_refused_at_once(
    solved: Doc, tmp_path: Path, key: str, where: str
) -> None:
    """A plan listing its routers 20,000 times (150 MB) was validated for minutes and then
    applied; the inventory lists each host and net once, and so does a plan (checked before
    the schema, so the size of the copy does not matter: twice is enough here)."""
    _refused(_write(tmp_path, solved, lambda d: d.update({key: d[key] * 2})), where)


def _generate(tmp_path: Path) -> tuple[tuple[str, ...], ...]:
    return (*COMMANDS, ("generate", DEMO, "--out", str(tmp_path / "out")))


@pytest.mark.parametrize(
    ("keys", "value"),
    [
        (("client_classes", 0, "net"), "zz"),
        (("server_routes", 0, "routes", 0, "net"), "ib"),
        (("servers", 0, "server_net"), "o2ib0"),
        (("routers", 0, "interfaces", 0, "nid"), "4294967296@gni"),
    ],
)
def test_a_net_or_nid_the_inventory_would_not_read_is_refused(
    solved: Doc, tmp_path: Path, keys: tuple[str | int, ...], value: str
) -> None:
    """A net of an unknown LND ('zz') or a net written otherwise than lnetgen writes it passed
    the schema's pattern and ended in a NodeSyntaxError in generate; a NID past 32 bits was
    configured.  Nets and NIDs are parsed as the inventory parses them (and a null is still a
    type error, not a parse)."""
    where = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)
    _refused(_write(tmp_path, solved, _set(*keys, value=value)), where, _generate(tmp_path))
    _refused(_write(tmp_path, solved, _set(*keys, value=None)), where)


def _rename(old: str, new: str) -> Callable[[Doc], None]:
    """Host ``old`` called ``new`` wherever the plan names it (so that the plan still fits
    together, and only the inventory can tell)."""

    def edit(doc: Doc) -> None:
        renamed = json.loads(json.dumps(doc).replace(f'"{old}"', f'"{new}"'))
        doc.clear()
        doc.update(renamed)

    return edit


def _no_routers(doc: Doc) -> None:
    doc["routers"] = []
    for net in doc["networks"]:
        net["routers"] = net["primary_routers"] = []


def _readdress(*keys: str | int) -> Callable[[Doc], None]:
    """The NID at ``keys`` given the address 99 of its subnet, in every list of the host that
    states it (a server's server-net NID, a router's ``nids``)."""

    def nid(doc: Doc) -> Any:
        target: Any = doc
        for k in keys:
            target = target[k]
        return target

    def edit(doc: Doc) -> None:
        addr, _, net = nid(doc).rpartition("@")
        new_addr = addr.rpartition(".")[0] + ".99"
        host: Any = doc[keys[0]][keys[1]]
        renamed = json.loads(json.dumps(host).replace(f'"{addr}@', f'"{new_addr}@'))
        host.clear()
        host.update(renamed)
        assert nid(doc) == f"{new_addr}@{net}"

    return edit


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (_rename("mds01", "zz"), "$.servers[0].name"),
        (_no_routers, "$.routers"),
        (_set("site", value="other"), "$.site"),
        (
            _set("client_classes", 0, "members", value="nid[00002-00097]"),
            "$.client_classes[0].members",
        ),
        (_readdress("servers", 0, "nid"), "$.servers[0].nid"),
        (_readdress("routers", 0, "interfaces", 1, "nid"), "$.routers[0].interfaces"),
    ],
)
def test_a_host_changed_under_the_inventorys_digest_is_refused(
    solved: Doc, tmp_path: Path, edit: Callable[[Doc], None], where: str
) -> None:
    """A plan still naming the inventory's digest with a server renamed ended in a KeyError in
    generate, and one without routers was applied; its hosts must be the inventory's.  A NID
    address changed by hand was configured although the inventory gives another."""
    _refused(_write(tmp_path, solved, edit), where, _generate(tmp_path))


def test_a_plan_of_format_1_is_checked_as_well(solved: Doc, tmp_path: Path) -> None:
    """Format 1 (each class lists its routes) skipped every check: a plan could set
    ``format_version`` to 1 and carry any name, count or node set."""

    def format_1(doc: Doc, name: str) -> None:
        sets = doc.pop("route_sets")
        for c in doc["client_classes"]:
            c["routes"] = [r for i in c.pop("route_sets") for r in sets[i]["routes"]]
        doc["format_version"] = 1
        doc["routers"][0]["name"] = name

    good = _write(tmp_path, solved, lambda d: format_1(d, d["routers"][0]["name"]), "1.json")
    assert read_plan(str(good)) == read_plan(str(_write(tmp_path, solved, lambda d: None)))
    _refused(_write(tmp_path, solved, lambda d: format_1(d, HOSTILE)), "$.routers[0].name")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_is_refused(solved: Doc, tmp_path: Path, constant: str) -> None:
    """Python's json reads NaN and Infinity, which are not JSON: a plan with one in its stats
    was accepted and written back into the output's plan.json as invalid JSON."""
    path = tmp_path / "plan.json"
    text = json.dumps(solved).replace('"idle_routers": 0', f'"idle_routers": {constant}')
    assert constant in text
    path.write_text(text, encoding="utf-8")
    _refused(path, "$.stats.idle_routers", _generate(tmp_path))
    r = run("generate", DEMO, "--out", str(tmp_path / "out"), "--plan", str(path))
    assert f"{constant} is not a JSON number" in r.output
    assert not (tmp_path / "out").exists()


def test_a_key_given_twice_is_refused(solved: Doc, tmp_path: Path) -> None:
    """Python's json keeps the last of two equal keys: a plan naming a server's NID twice, the
    one a reviewer reads first not the one applied, was applied with the second.  A plan is
    standard JSON, each key once per object."""
    path = tmp_path / "plan.json"
    nid = solved["servers"][2]["nid"]
    text = json.dumps(solved).replace(
        f'"nid": "{nid}"', f'"nid": "10.10.9.9@o2ib100", "nid": "{nid}"'
    )
    assert text.count("10.10.9.9@o2ib100") == 1
    path.write_text(text, encoding="utf-8")
    _refused(path, "$.servers[2].nid", _generate(tmp_path))
    r = run("generate", DEMO, "--out", str(tmp_path / "out"), "--plan", str(path))
    assert "key 'nid' appears twice in one object" in r.output
    assert not (tmp_path / "out").exists()


def _stale(tmp_path: Path, old: str, new: str) -> str:
    """The demo site with ``old`` replaced by ``new``: a plan of the demo is stale for it."""
    text = Path(DEMO).read_text(encoding="utf-8")
    assert old in text
    site = tmp_path / "site.yaml"
    site.write_text(text.replace(old, new), encoding="utf-8")
    return str(site)


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("name: oss01", "name: oss91", "$.servers[2].name"),
        ("name: rtr01", "name: rtr91", "$.routers[0].name"),
        ("nid[00001-00096]", "nid[00001-00090]", "$.client_classes[0].members"),
    ],
)
def test_force_does_not_use_a_plan_naming_hosts_the_inventory_lacks(
    solved: Doc, tmp_path: Path, old: str, new: str, where: str
) -> None:
    """``generate --force`` with a stale plan whose server or client the inventory no longer
    has ended in a KeyError; one whose router was renamed wrote a tree routing through a router
    the inventory no longer has.  --force lifts the digest check, not the hosts."""
    site = _stale(tmp_path, old, new)
    plan = _write(tmp_path, solved, lambda d: None)
    out = tmp_path / "out"
    for cmd in (("generate", site, "--out", str(out)), ("analyze", site)):
        r = run(*cmd, "--plan", str(plan), "--force")
        assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
        assert r.exit_code == 2, (cmd, r.output)
        assert _at(plan, "E-PLAN-STALE", where).search(r.output), r.output
        assert "--force uses a stale plan only for the hosts the inventory still has" in r.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("old", "new"),
    [("nid[00001-00096]", "nid[00001-00100]"), ("10.10.1.1\n", "10.10.1.99\n")],
)
def test_force_uses_a_plan_whose_hosts_the_inventory_still_has(
    solved: Doc, tmp_path: Path, old: str, new: str
) -> None:
    """Clients added, or a NID changed since: --force applies the plan as it is, with the
    warning (the new clients get no configuration; the old NID is the plan's)."""
    site = _stale(tmp_path, old, new)
    plan = _write(tmp_path, solved, lambda d: None)
    r = run("generate", site, "--out", str(tmp_path / "out"), "--plan", str(plan), "--force")
    assert r.exit_code == 0, r.output
    assert "warning[W-PLAN-STALE]" in r.output
    written = json.loads((tmp_path / "out" / "plan.json").read_text(encoding="utf-8"))
    assert written["servers"] == solved["servers"]


@pytest.mark.parametrize("value", [-1, True, 1.0, "1", None, 10**30, [0]])
def test_a_route_set_index_of_another_type_or_range_is_refused_at_its_path(
    solved: Doc, tmp_path: Path, value: object
) -> None:
    """A class's route-set indices are checked by hand before the schema (they are most of a
    large plan's values); anything but an integer from 0 to the number of route sets is still
    refused at its own path."""
    plan = _write(tmp_path, solved, _set("client_classes", 0, "route_sets", 1, value=value))
    _refused(plan, "$.client_classes[0].route_sets[1]")
