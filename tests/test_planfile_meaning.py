"""A plan.json whose values each pass the schema but do not fit together -- a class on no
client net, a hop count LNet refuses, an interface, route set or route listed twice, a gateway
on the net it routes to -- is refused by ``--plan`` with ``E-PLAN`` at the JSON path of the
value that breaks it (exit 2).  Each used to end in a traceback in a later command (named in
the test), or to be applied though it could not mean what it says.
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

from lnetgen.cli import main
from lnetgen.planfile import read_plan

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")
TWO_NETS = str(ROOT / "tests" / "cases" / "valid" / "two-client-nets" / "site.yaml")

Doc = dict[str, Any]
Edit = Callable[[Doc], object]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _solve(tmp_path_factory: pytest.TempPathFactory, site: str) -> Doc:
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    assert run("solve", site, "--out", str(path)).exit_code == 0
    doc: Doc = json.loads(path.read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """The demo site's plan: one client net (gni), six storage nets, a server net (o2ib)."""
    return _solve(tmp_path_factory, DEMO)


@pytest.fixture(scope="module")
def two_nets(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """A plan with two client nets (gni, tcp): a class each, server routes to both."""
    return _solve(tmp_path_factory, TWO_NETS)


def _write(tmp_path: Path, solved: Doc, edit: Edit) -> Path:
    doc = copy.deepcopy(solved)
    edit(doc)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _refused(plan: Path, where: str, site: str = DEMO, *commands: str) -> str:
    """``generate``, ``analyze`` and ``place clients`` (or ``commands``) refuse ``plan`` with
    E-PLAN at ``where``, exit 2, and write nothing; the message."""
    out = plan.parent / "out"
    argv = {
        "generate": ("generate", site, "--out", str(out)),
        "analyze": ("analyze", site),
        "place": ("place", "clients", site, "--oss", "oss01"),
    }
    message = ""
    for name in commands or tuple(argv):
        r = run(*argv[name], "--plan", str(plan))
        assert r.exception is None or isinstance(r.exception, SystemExit), (name, r.exception)
        assert r.exit_code == 2, (name, r.output)
        head = re.escape(f"error[E-PLAN] {where}: not a plan lnetgen wrote: ")
        found = re.search(rf"{re.escape(str(plan))}:[1-9]\d*:[1-9]\d*: {head}(.*)", r.output)
        assert found, (name, r.output)
        message = found.group(1)
    assert not out.exists()
    return message


def _format_1(doc: Doc) -> None:
    sets = doc.pop("route_sets")
    for c in doc["client_classes"]:
        c["routes"] = [r for i in c.pop("route_sets") for r in sets[i]["routes"]]
    doc["format_version"] = 1


def _kind(doc: Doc, kind: str) -> list[Doc]:
    return [n for n in doc["networks"] if n["kind"] == kind]


def test_the_plans_of_several_client_nets_and_rails_are_read(
    demo: Doc, two_nets: Doc, tmp_path: Path
) -> None:
    """The checks refuse nothing lnetgen writes, in either format: two client nets, and a
    site whose routers and servers have Multi-Rail ports (two NIs on one net)."""
    multirail = str(ROOT / "tests" / "cases" / "valid" / "multirail" / "site.yaml")
    path = tmp_path / "mr.json"
    assert run("solve", multirail, "--out", str(path)).exit_code == 0
    rails: Doc = json.loads(path.read_text(encoding="utf-8"))
    assert any(s.get("rails") for s in rails["servers"])
    for doc in (demo, two_nets, rails):
        for edit in (lambda d: None, _format_1):
            read_plan(str(_write(tmp_path, doc, edit)))


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        (
            lambda d: d.update(networks=[n for n in d["networks"] if n["kind"] != "client"]),
            "$.client_classes[0].net",
            "gni is not a client net of the plan (networks has no net of kind client)",
        ),
        (
            lambda d: d["networks"][0].update(kind="server"),
            "$.client_classes[0].net",
            "gni is not a client net of the plan (networks has no net of kind client)",
        ),
        (
            lambda d: d["client_classes"][0].update(net="o2ib100"),
            "$.client_classes[0].net",
            "o2ib100 is not a client net of the plan (gni)",
        ),
        (
            lambda d: d["route_sets"][0].update(client_net="o2ib"),
            "$.route_sets[0].client_net",
            "o2ib is not a client net of the plan (gni)",
        ),
    ],
)
def test_a_class_on_no_client_net_is_refused(
    demo: Doc, tmp_path: Path, edit: Edit, where: str, said: str
) -> None:
    """A plan whose client net was deleted (or made a server net) ended in an IndexError in
    ``analyze`` (throughput/predict.py) and ``place clients`` (traffic/flows.py): the analysis
    keys server routes by client net, and there was none.  A class is on a client net of the
    plan (lnetgen writes one network of kind client per net of the inventory's clients); a
    class moved onto a storage net was configured as clients of that net."""
    plan = _write(tmp_path, demo, edit)
    assert _refused(plan, where, DEMO, "analyze", "place", "generate") == said


@pytest.mark.parametrize("hop", [0, -2, 256])
@pytest.mark.parametrize(
    ("table", "where"),
    [
        (lambda d: d["route_sets"][2]["routes"][1], "$.route_sets[2].routes[1].hop"),
        (lambda d: d["server_routes"][3]["routes"][0], "$.server_routes[3].routes[0].hop"),
    ],
)
def test_a_hop_count_lnet_refuses_is_refused(
    demo: Doc, tmp_path: Path, hop: int, table: Callable[[Doc], Doc], where: str
) -> None:
    """The schema allowed hop 0 (-1..255), which ended in a ValueError in ``generate``
    (routestr/kroute.py): ``lnetctl route add --hop`` and the kernel take 1-255, or -1
    (LNET_UNDEFINED_HOPS) for none."""
    said = _refused(_write(tmp_path, demo, lambda d: table(d).update(hop=hop)), where)
    assert said.startswith(f"{hop} is outside the hop counts LNet takes: 1-255"), said
    for fine in (-1, 255):
        read_plan(str(_write(tmp_path, demo, lambda d, fine=fine: table(d).update(hop=fine))))


def test_a_hop_count_of_0_in_a_plan_of_format_1_is_refused(demo: Doc, tmp_path: Path) -> None:
    def edit(doc: Doc) -> None:
        _format_1(doc)
        doc["client_classes"][0]["routes"][9]["hop"] = 0

    _refused(_write(tmp_path, demo, edit), "$.client_classes[0].routes[9].hop")


def _ni(doc: Doc, router: int, net: str, nid: str) -> None:
    doc["routers"][router]["interfaces"].append({"net": net, "nid": nid, "interface": "ib7"})


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        (
            lambda d: d["routers"][0]["interfaces"].append(d["routers"][0]["interfaces"][1]),
            "$.routers[0].interfaces[3].nid",
            "NID 10.10.0.1@o2ib100 is listed twice (also at $.routers[0].interfaces[1].nid)",
        ),
        (
            lambda d: _ni(d, 4, "o2ib102", "10.10.0.1@o2ib102"),
            "$.routers[4].interfaces[3].nid",
            "NID 10.10.0.1@o2ib102 is listed twice (also at $.routers[0].interfaces[2].nid)",
        ),
        (
            lambda d: _ni(d, 0, "gni", "299@gni"),
            "$.routers[0].interfaces[3].net",
            "gni again after o2ib102: a host's NIs on one net are listed together",
        ),
        (
            lambda d: _ni(d, 0, "o2ib100", "10.10.9.1@o2ib101"),
            "$.routers[0].interfaces[3].nid",
            "10.10.9.1@o2ib101 is not on o2ib100, the net of this interface",
        ),
        (
            lambda d: d["routers"][0]["networks"].append("o2ib100"),
            "$.routers[0].networks",
            "['gni', 'o2ib100', 'o2ib102', 'o2ib100'] are not the nets of its interfaces "
            "['gni', 'o2ib100', 'o2ib102']",
        ),
        (
            lambda d: d["routers"][0]["nids"].pop(),
            "$.routers[0].nids",
            "not the NIDs of its interfaces, in their order",
        ),
    ],
)
def test_a_router_interface_listed_twice_is_refused(
    demo: Doc, tmp_path: Path, edit: Edit, where: str, said: str
) -> None:
    """A router interface listed twice ended in a ValueError in ``generate`` (the Ansible
    emitter: 'networks for gni are not adjacent'); a NID on two routers, or on another net
    than its interface's, was configured.  A router's ``networks`` and ``nids`` restate its
    interfaces and were ignored when they did not."""
    assert _refused(_write(tmp_path, demo, edit), where) == said


def _extra_set(doc: Doc) -> None:
    """A seventh route set to o2ib100 (the first two routes of set 0), named by the class in
    place of its set to o2ib201."""
    doc["route_sets"].append({**doc["route_sets"][0], "routes": doc["route_sets"][0]["routes"][:2]})
    doc["client_classes"][0]["route_sets"][5] = 6


def _late_route(doc: Doc) -> None:
    _format_1(doc)
    routes = doc["client_classes"][0]["routes"]
    routes.append({**routes[0], "gateway": "220@gni", "priority": 9})


@pytest.mark.parametrize(
    ("site", "edit", "where", "said"),
    [
        (
            DEMO,
            lambda d: d["client_classes"][0]["route_sets"].append(0),
            "$.client_classes[0].route_sets[6]",
            "route set 0 is listed twice (route_sets[0] of this class): a class has one route "
            "set per storage net",
        ),
        (
            DEMO,
            _extra_set,
            "$.client_classes[0].route_sets[5]",
            "route set 6 goes to o2ib100, as route set 0 does (route_sets[0] of this class): a "
            "class has one route set per storage net",
        ),
        (
            TWO_NETS,
            lambda d: d["client_classes"][0]["route_sets"].__setitem__(1, 5),
            "$.client_classes[0].route_sets[1]",
            "route set 5 is for clients on tcp; this class is on gni",
        ),
        (
            DEMO,
            _late_route,
            "$.client_classes[0].routes[40].net",
            "o2ib100 again after o2ib201: routes to one net are listed together",
        ),
        (
            TWO_NETS,
            lambda d: d["server_routes"][0]["routes"].append(d["server_routes"][0]["routes"][0]),
            "$.server_routes[0].routes[2].gateway",
            "the route to gni through 10.10.0.1@o2ib100 is listed twice (also routes[0])",
        ),
        (
            DEMO,
            lambda d: d["route_sets"][1]["routes"].insert(
                1, {**d["route_sets"][1]["routes"][0], "priority": 3}
            ),
            "$.route_sets[1].routes[1].gateway",
            "the route to o2ib101 through 205@gni is listed twice (also routes[0])",
        ),
    ],
)
def test_a_route_set_or_route_listed_twice_is_refused(
    demo: Doc, two_nets: Doc, tmp_path: Path, site: str, edit: Edit, where: str, said: str
) -> None:
    """A class naming one route set twice, or two route sets to one net, and a table whose
    routes to one net are not together, ended in a ValueError in ``generate`` (the Ansible
    emitter: 'routes ... are not adjacent'); a class using the route set of another client
    net was configured with gateways it cannot reach, and a route through one gateway twice
    (LNet keeps the first) with a priority that is not applied."""
    solved = demo if site == DEMO else two_nets
    assert _refused(_write(tmp_path, solved, edit), where, site, "generate") == said


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        (
            lambda d: d["route_sets"][0]["routes"][0].update(gateway="10.10.0.1@o2ib100"),
            "$.route_sets[0].routes[0].gateway",
            "10.10.0.1@o2ib100 is on o2ib100 itself, the net it routes to",
        ),
        (
            lambda d: d["server_routes"][0]["routes"][0].update(gateway="201@gni"),
            "$.server_routes[0].routes[0].gateway",
            "201@gni is on gni itself, the net it routes to",
        ),
        (
            lambda d: d["route_sets"][0]["routes"][0].update(gateway="10.10.0.1@o2ib102"),
            "$.route_sets[0].routes[0].gateway",
            "10.10.0.1@o2ib102 is not on gni, the net of its clients",
        ),
        (
            lambda d: d["server_routes"][0]["routes"][0].update(net="o2ib101"),
            "$.server_routes[0].routes[0].net",
            "o2ib101 is not a client net of the plan (gni)",
        ),
        (
            lambda d: d["route_sets"][0].update(routes=[]),
            "$.route_sets[0].routes",
            "a route set has at least one route",
        ),
    ],
)
def test_a_gateway_on_the_net_it_routes_to_is_refused(
    demo: Doc, tmp_path: Path, edit: Edit, where: str, said: str
) -> None:
    """A route to o2ib100 through a NID on o2ib100 (LNet refuses it: EINVAL) ended in a
    ValueError in ``generate`` (routestr/kroute.py); a gateway on a net the host is not on
    (LNet: EHOSTUNREACH) was configured; a route set without routes was 'bad or missing' at
    ``$``."""
    assert _refused(_write(tmp_path, demo, edit), where, DEMO, "generate") == said


def _drop(key: str) -> Edit:
    return lambda d: d["servers"][0].pop(key)


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        (
            lambda d: d["servers"][0].update(server_net=""),
            "$.servers[0].server_net",
            "server_net and server_nid are given together (the server's NID on its fabric's "
            "server net), or neither",
        ),
        (_drop("server_nid"), "$.servers[0].server_nid", "server_net and server_nid are"),
        (_drop("server_net"), "$.servers[0].server_net", "server_net and server_nid are"),
        (
            lambda d: d["servers"][0].update(server_net="o2ib100", server_nid="10.10.2.1@o2ib100"),
            "$.servers[0].server_net",
            "o2ib100 is not a server net of the plan",
        ),
        (
            lambda d: d["servers"][0].update(server_nid="10.10.2.9@o2ib"),
            "$.servers[0].server_nid",
            "10.10.2.9@o2ib has another address than 10.10.2.1@o2ib103",
        ),
        (
            lambda d: d["servers"][0].update(net="o2ib", nid="10.10.2.1@o2ib"),
            "$.servers[0].net",
            "o2ib is not a storage net of the plan",
        ),
        (
            lambda d: d["servers"][0].update(nid="10.10.2.1@o2ib100"),
            "$.servers[0].nid",
            "10.10.2.1@o2ib100 is not on o2ib103, the net of server mds01",
        ),
        (
            lambda d: d["servers"][2].update(failover="oss01"),
            "$.servers[2].failover",
            "failover partner oss01 is the server itself",
        ),
        (
            lambda d: d["servers"][2].update(failover="oss99"),
            "$.servers[2].failover",
            "failover partner oss99 is not a server of the plan",
        ),
        (
            lambda d: d["networks"][0]["servers"].append("oss04"),
            "$.networks[0].servers[0]",
            "oss04 is not a server on gni",
        ),
        (
            lambda d: d["networks"][7]["servers"].append("oss04"),
            "$.networks[7].servers[14]",
            "oss04 is listed twice",
        ),
        (
            lambda d: d["networks"][7]["servers"].pop(),
            "$.networks[7].servers",
            "oss12 on o2ib not listed",
        ),
        (
            lambda d: d["networks"][1]["routers"].append("rtr05"),
            "$.networks[1].routers[8]",
            "rtr05 is not a router with an NI on o2ib100",
        ),
        (
            lambda d: d["networks"][1]["primary_routers"].append("rtr04"),
            "$.networks[1].primary_routers[4]",
            "rtr04 is listed twice",
        ),
    ],
)
def test_a_server_or_network_that_does_not_fit_is_refused(
    demo: Doc, tmp_path: Path, edit: Edit, where: str, said: str
) -> None:
    """A server with a server net but no NID on it (or the other way round) ended in a
    ValueError in every command (hostplan.py: zip); a server on a net other than its NID's,
    or a failover partner that is no other server, was configured; a network listing servers
    or routers that are not on it was used as listed."""
    assert _refused(_write(tmp_path, demo, edit), where, DEMO, "generate").startswith(said)


def test_two_client_classes_of_one_name_are_refused(two_nets: Doc, tmp_path: Path) -> None:
    """A class's name names its output files: two classes of one name ended in an
    AssertionError in ``generate`` ('two output files share the path')."""

    def edit(doc: Doc) -> None:
        doc["client_classes"][1]["name"] = doc["client_classes"][0]["name"]

    said = _refused(_write(tmp_path, two_nets, edit), "$.client_classes[1].name", TWO_NETS)
    assert said == "'clients-gni' is listed twice"


def test_a_client_in_two_classes_is_refused(demo: Doc, tmp_path: Path) -> None:
    """A client has one route table: a plan whose second class repeats the first one's members
    was refused only for its client count under the inventory's digest, and with ``--force``
    (a stale plan) reached the Ansible emitter, which reported the clients (exit 1)."""
    site = tmp_path / "site.yaml"
    text = Path(DEMO).read_text(encoding="utf-8")
    assert text.count("nid[00001-00096]") == 1
    site.write_text(text.replace("nid[00001-00096]", "nid[00001-00100]"), encoding="utf-8")

    def edit(doc: Doc) -> None:
        doc["client_classes"].append({**doc["client_classes"][0], "name": "clients-gni-2"})

    plan = _write(tmp_path, demo, edit)
    out = tmp_path / "out"
    for cmd in (("generate", str(site), "--out", str(out)), ("analyze", str(site))):
        r = run(*cmd, "--plan", str(plan), "--force")
        assert r.exit_code == 2, (cmd, r.output)
        head = "error[E-PLAN] $.client_classes[1].members: not a plan lnetgen wrote: "
        assert f": {head}nid[00001-00096] are members of an earlier class too" in r.output
        assert f"{plan}: {head}" not in r.output  # located at a line and column
    assert not out.exists()
