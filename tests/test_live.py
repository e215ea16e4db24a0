"""Live dumps: every format real nodes print parses to the right normalized state; garbled
dumps fail naming file and line."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
from conftest import demo_next_pairing
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import live
from lnetgen.api import solve_site
from lnetgen.live import HostState, LiveParseError, parse_dump, read_live
from lnetgen.live import dump as live_dump
from lnetgen.live.modprobe import logical_lines
from lnetgen.plan import Plan

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).resolve().parent / "fixtures" / "live"
DEMO = FIX / "demo"


@cache
def demo_plan() -> Plan:
    return solve_site(str(demo_next_pairing()))[1]  # the pairing the dumps were taken with


def client_routes() -> dict[tuple[str, str], tuple[int, int]]:
    return {(r.net, r.gateway): (r.hop, r.priority) for r in demo_plan().client_classes[0].routes}


def server_routes(host: str) -> dict[tuple[str, str], tuple[int, int]]:
    return {(r.net, r.gateway): (r.hop, r.priority) for r in demo_plan().routes_for_server()[host]}


def parse(path: Path) -> HostState:
    return parse_dump(path.read_bytes(), str(path))


@cache
def demo_live() -> live.LiveSet:
    return read_live(str(DEMO))


ROUTER_NETS = {
    "gni": ("ipogif0",),
    "o2ib100": ("ib0",),
    "o2ib102": ("ib0",),
    "o2ib103": ("ib0",),
}


# ----------------------------------------------------------------------------- formats


def test_router_export_full_layout() -> None:
    s = parse(DEMO / "rtr01.yaml")
    assert s.formats == (live.EXPORT,)
    assert s.nets is not None and dict(s.nets.nets) == ROUTER_NETS  # lo is not a network
    assert s.nets.nids["gni"] == ("201@gni",)
    assert s.nets.nids["o2ib103"] == ("10.10.0.1@o2ib103",)
    assert s.routes is not None and dict(s.routes.routes) == {}  # an export lists no route:
    assert s.routing is True  # from the "- enable: 1" item of the per-CPT sequence
    assert s.peers["10.10.1.1@o2ib100"] == frozenset({"10.10.1.1@o2ib100"})  # "-     nid:"
    assert s.all_health == ()


def test_router_export_backup_layout() -> None:
    s = parse(DEMO / "rtr02.yaml")
    assert s.formats == (live.BACKUP,)
    assert s.nets is not None and dict(s.nets.nets) == ROUTER_NETS
    assert dict(s.nets.nids) == {}  # --backup writes no NIDs
    assert s.routing is True  # routing as a mapping
    assert s.routes is not None and not s.routes.routes


def test_net_show_and_lctl_routes_merge() -> None:
    s = demo_live().hosts["rtr03"]
    assert s.formats == (live.NET_SHOW, live.LCTL_ROUTES)
    assert s.nets is not None and dict(s.nets.nets) == ROUTER_NETS
    assert s.routing is True  # "Routing enabled"
    assert s.routes is not None and dict(s.routes.routes) == {}
    assert "NI 10.10.0.3@o2ib103 is down" in s.all_health


def test_routing_show_and_modprobe_with_continuations() -> None:
    s = demo_live().hosts["rtr04"]
    assert s.formats == (live.MODPROBE, live.ROUTING_SHOW)
    assert s.nets is not None and dict(s.nets.nets) == ROUTER_NETS  # joined across lines
    assert s.routing is True


def test_server_export_routes_state_and_peers() -> None:
    s = parse(DEMO / "oss01.yaml")
    assert s.formats == (live.EXPORT,)
    want = server_routes("oss01")
    del want[("gni", "10.10.0.5@o2ib100")]
    want[("gni", "10.10.0.5@o2ib101")] = (1, 1)  # listed under the router's primary NID
    assert s.routes is not None and dict(s.routes.routes) == want
    assert s.routing is False
    assert s.peers["10.10.0.5@o2ib100"] == frozenset(
        {"10.10.0.5@o2ib101", "10.10.0.5@o2ib100", "205@gni"}
    )
    assert "gateway 10.10.0.8@o2ib100 is down (routes to gni)" in s.all_health


def test_route_show_verbose_and_net_show() -> None:
    s = demo_live().hosts["oss02"]
    assert s.formats == (live.NET_SHOW, live.ROUTE_SHOW_V)
    assert s.routes is not None and s.routes.detailed
    assert dict(s.routes.routes) == server_routes("oss02")
    assert s.nets is not None and dict(s.nets.nets) == {"o2ib100": ("ib0",), "o2ib": ("ib0",)}
    assert s.routing is None  # neither dump shows routing


def test_modprobe_server_routes_with_ranges_and_priorities() -> None:
    s = parse(DEMO / "oss03.conf")
    assert s.formats == (live.MODPROBE,)
    assert s.nets is not None and dict(s.nets.nets) == {"o2ib100": ("ib0",), "o2ib": ("ib0",)}
    assert s.routes is not None and dict(s.routes.routes) == server_routes("oss03")
    assert s.routing is False


def test_lctl_routes_table() -> None:
    s = parse(DEMO / "oss04")
    assert s.formats == (live.LCTL_ROUTES,)
    assert s.routing is False
    assert s.nets is None
    assert s.routes is not None and dict(s.routes.routes) == server_routes("oss04")
    assert s.all_health == (
        "gateway 10.10.0.9@o2ib101 is down (routes to gni)",
        "gateway 10.10.0.10@o2ib101 is down (routes to gni)",
    )


def test_lctl_show_route() -> None:
    s = parse(DEMO / "oss05.txt")
    assert s.formats == (live.LCTL_SHOW_ROUTE,)
    assert s.routing is None
    assert s.routes is not None and dict(s.routes.routes) == server_routes("oss05")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("nid00001.yaml", live.BACKUP),
        ("nid00003.conf", live.MODPROBE),
        ("nid00004.txt", live.LCTL_ROUTES),
    ],
)
def test_client_dumps_give_the_class_routes(name: str, fmt: str) -> None:
    s = parse(DEMO / name)
    assert s.formats == (fmt,)
    assert s.routes is not None and dict(s.routes.routes) == client_routes()
    assert s.routing is False


def test_route_show_without_verbose_has_no_details() -> None:
    s = demo_live().hosts["nid00002"]
    assert s.routes is not None and not s.routes.detailed
    assert set(s.routes.routes) == set(client_routes())
    assert any("route show -v" in n for n in s.all_health)
    assert s.nets is not None and s.nets.nids == {"gni": ("2@gni",)}


def test_normalization_canonical_names_ranges_and_missing_hop() -> None:
    s = parse(FIX / "drift" / "oss07.yaml")
    assert s.routes is not None
    r = dict(s.routes.routes)
    # gni0 == gni, gateway ranges expanded, hop -1 kept (a problem, reported as health)
    for last in range(9, 13):
        assert r[("gni", f"10.10.0.{last}@o2ib102")] == (-1, 0)
    for last in range(1, 4):
        assert r[("gni", f"10.10.0.{last}@o2ib102")] == (1, 1)
    assert len(r) == 8
    assert s.all_health == (
        "route to gni via 10.10.0.9@o2ib102 and 3 more has no hop count "
        "(-1); single-hop FGR routes need hop 1",
    )


def test_missing_priority_is_zero_and_missing_hop_is_undefined() -> None:
    text = (
        "route:\n    - net: o2ib1\n      gateway: 10@gni\n      priority: 2\n"
        "    - net: o2ib1\n      gateway: 11@gni\n      hop: 1\n"
    )
    s = parse_dump(text, "x")
    assert s.routes is not None
    assert dict(s.routes.routes) == {("o2ib1", "10@gni"): (-1, 2), ("o2ib1", "11@gni"): (1, 0)}


def test_crlf_document_markers_and_o2ib0() -> None:
    text = (
        "---\r\nnet:\r\n    - net type: o2ib0\r\n      local NI(s):\r\n"
        "        - nid: 10.0.0.1@o2ib0\r\n          interfaces:\r\n              0: ib0\r\n"
        "routing:\r\n    enable: 0\r\n...\r\n"
    )
    s = parse_dump(text, "x")
    assert s.nets is not None and dict(s.nets.nets) == {"o2ib": ("ib0",)}
    assert s.nets.nids == {"o2ib": ("10.0.0.1@o2ib",)}
    assert s.routing is False


def test_modprobe_kernel_filtering() -> None:
    text = (
        'options lnet networks="o2ib1(ib0)" routes="gni 1 10.0.0.[1-2]@o2ib1; '
        'o2ib1 1 7@gni; tcp 1 10.1.1.1@tcp2; gni 1 10.0.0.1@o2ib1:3"\n'
    )
    s = parse_dump(text, "x")
    assert s.routes is not None
    assert dict(s.routes.routes) == {
        ("gni", "10.0.0.1@o2ib1"): (1, 0),
        ("gni", "10.0.0.2@o2ib1"): (1, 0),
    }
    notes = s.all_health
    assert "route to local net o2ib1 is ignored by the kernel" in notes
    assert "gateway 10.1.1.1@tcp2 is not on a local net: the kernel ignores this route" in notes
    assert "route to gni via 10.0.0.1@o2ib1 given twice; the kernel keeps the first" in notes


def test_modprobe_line_continuation_error_location() -> None:
    text = '# c\noptions lnet networks=o2ib1(ib0) \\\n   routes="gni 1 10.0.0.1@o2ib1:"\n'
    with pytest.raises(LiveParseError) as err:
        parse_dump(text, "m.conf")
    d = err.value.diagnostic
    assert (d.file, d.line) == ("m.conf", 3)
    assert "routes=" in d.message and "priority" in d.message


@pytest.mark.parametrize(
    ("name", "line", "code", "text"),
    [
        ("binary.yaml", 5, "E-LIVE-BINARY", "NUL byte"),
        ("dupsection.yaml", 8, "E-LIVE-PARSE", "'route' appears twice"),
        ("elan.yaml", 2, "E-LIVE-PARSE", "'elan' LND was removed"),
        ("empty.txt", 0, "E-LIVE-EMPTY", "empty"),
        ("hop-bad.yaml", 4, "E-LIVE-PARSE", "hop count 300"),
        ("html.txt", 1, "E-LIVE-PARSE", "not an lnetctl YAML dump"),
        ("lctl-badheader.txt", 2, "E-LIVE-PARSE", "expected the header"),
        ("lctl-shortrow.txt", 4, "E-LIVE-PARSE", "expected 5 columns"),
        ("modprobe-badfwd.conf", 2, "E-LIVE-PARSE", "forwarding='maybe'"),
        ("modprobe-badnet.conf", 3, "E-LIVE-PARSE", "without a closing ')'"),
        ("modprobe-nolnet.conf", 0, "E-LIVE-PARSE", "no 'options lnet' line"),
        ("notlnet.yaml", 1, "E-LIVE-PARSE", "1 other top-level key(s)"),
        ("route-missing-gw.yaml", 6, "E-LIVE-PARSE", "without 'gateway'"),
        ("tabs.yaml", 3, "E-LIVE-PARSE", "tab character"),
        ("truncated.yaml", 16, "E-LIVE-PARSE", "bad gateway"),
    ],
)
def test_garbled_dumps_name_file_and_line(name: str, line: int, code: str, text: str) -> None:
    path = FIX / "garbled" / name
    with pytest.raises(LiveParseError) as err:
        parse_dump(path.read_bytes(), str(path), host="h1")
    d = err.value.diagnostic
    assert d.file == str(path)
    assert d.line == line, d.format()
    assert d.code == code
    assert text in d.message and d.message.startswith("host h1: ")


def test_yaml_syntax_error_is_located() -> None:
    path = FIX / "drift" / "oss08.yaml"
    with pytest.raises(LiveParseError) as err:
        parse(path)
    assert err.value.diagnostic.line == 12
    assert "YAML syntax error" in err.value.diagnostic.message


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Routing enabled\nnet hops priority state router\n", "lctl-routes"),
        ("routes=\nRouting disabled\n", "lctl-routes"),
        ("net  o2ib1 hops 1 gw   10@gni up pri 0\n", "lctl-show-route"),
        ("# x\n\noptions lnet networks=tcp\n", "modprobe"),
        ("alias lnet-x off\n", "modprobe"),
        ("# generated\nnet:\n", "yaml"),
        ("options:\n  - a\n", "yaml"),
        ("\n# only a comment\n", ""),
    ],
)
def test_detect_format(text: str, kind: str) -> None:
    assert live.detect_format(text) == kind


@pytest.mark.parametrize(
    ("name", "host"),
    [
        ("nid00042", "nid00042"),
        ("nid00042.yaml", "nid00042"),
        ("oss01.net.yaml", "oss01"),
        ("/a/b/rtr01.conf", "rtr01"),
    ],
)
def test_host_of(name: str, host: str) -> None:
    assert live.host_of(name) == host


def test_fixture_files_exist_for_every_format() -> None:
    formats: set[str] = set()
    for name in os.listdir(DEMO):
        formats.update(parse(DEMO / name).formats)
    assert formats == {
        live.EXPORT,
        live.BACKUP,
        live.NET_SHOW,
        live.ROUTE_SHOW,
        live.ROUTE_SHOW_V,
        live.ROUTING_SHOW,
        live.LCTL_ROUTES,
        live.LCTL_SHOW_ROUTE,
        live.MODPROBE,
    }


# ----------------------------------------------------------------------------- hostile input


def test_modprobe_error_column_after_many_continuations() -> None:
    text = "options lnet \\\n" + "  forwarding=disabled \\\n" * 2000 + '  routes="gni 1 1@o2ib:x"\n'
    with pytest.raises(LiveParseError) as err:
        parse_dump(text, "m.conf")
    d = err.value.diagnostic
    assert (d.line, d.col) == (2002, 24)  # the 'x'


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab \\#\r", max_size=6), min_size=1, max_size=12))
def test_modprobe_logical_positions_point_at_the_character(physical: list[str]) -> None:
    text = "\n".join(physical)
    rows = text.split("\n")
    for logical in logical_lines(text):
        for i, ch in enumerate(logical.text):
            line, col = logical.at(i)
            assert rows[line - 1][col - 1] == ch


def test_out_of_memory_is_a_dump_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object) -> HostState:
        raise MemoryError

    monkeypatch.setattr(live_dump, "parse_yaml", boom)
    with pytest.raises(LiveParseError) as err:
        parse_dump("net:\n", "big.yaml", host="rtr01")
    d = err.value.diagnostic
    assert d.code == "E-LIVE-SIZE" and "memory" in d.message and "rtr01" in d.message
