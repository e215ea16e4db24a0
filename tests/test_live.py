"""Live dumps: every format real nodes print parses to the right normalized state; garbled
dumps fail naming file and line; the fast block-YAML reader agrees with PyYAML."""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import live
from lnetgen.api import solve_site
from lnetgen.diagnostics import InputError
from lnetgen.live import HostState, LiveParseError, parse_dump, read_live
from lnetgen.plan import Plan

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).resolve().parent / "fixtures" / "live"
DEMO = FIX / "demo"


@cache
def demo_plan() -> Plan:
    return solve_site(str(ROOT / "sites" / "demo.yaml"))[1]


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
    "o2ib201": ("ib0",),
}


# ----------------------------------------------------------------------------- formats


def test_router_export_full_layout() -> None:
    s = parse(DEMO / "rtr01.yaml")
    assert s.formats == (live.EXPORT,)
    assert s.nets is not None and dict(s.nets.nets) == ROUTER_NETS  # lo is not a network
    assert s.nets.nids["gni"] == ("201@gni",)
    assert s.nets.nids["o2ib201"] == ("10.10.0.1@o2ib201",)
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
    assert "NI 10.10.0.3@o2ib201 is down" in s.all_health


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
    assert s.nets is not None and dict(s.nets.nets) == {"o2ib100": ("ib0",)}
    assert s.routing is None  # neither dump shows routing


def test_modprobe_server_routes_with_ranges_and_priorities() -> None:
    s = parse(DEMO / "oss03.conf")
    assert s.formats == (live.MODPROBE,)
    assert s.nets is not None and dict(s.nets.nets) == {"o2ib100": ("ib0",)}
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
        ("notlnet.yaml", 1, "E-LIVE-PARSE", "found lustre_mounts"),
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


# ----------------------------------------------------------------------------- reading PATH


def test_read_live_directory_merges_files_per_host() -> None:
    ls = demo_live()
    assert sorted(ls.hosts) == [
        "nid00001",
        "nid00002",
        "nid00003",
        "nid00004",
        "oss01",
        "oss02",
        "oss03",
        "oss04",
        "oss05",
        "rtr01",
        "rtr02",
        "rtr03",
        "rtr04",
    ]
    assert ls.errors == [] and ls.generated is None
    assert ls.files["rtr03"] == (str(DEMO / "rtr03.net.yaml"), str(DEMO / "rtr03.routes.txt"))


def test_read_live_single_file_and_bad_paths(tmp_path: Path) -> None:
    ls = read_live(str(DEMO / "oss03.conf"))
    assert list(ls.hosts) == ["oss03"]
    with pytest.raises(InputError, match="no such file"):
        read_live(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no dump files"):
        read_live(str(tmp_path / "empty"))


def test_read_live_keeps_going_after_a_bad_dump(tmp_path: Path) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    shutil.copy(FIX / "garbled" / "truncated.yaml", tmp_path / "oss02.yaml")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"]
    assert ls.error_hosts == {"oss02"}
    assert ls.errors[0].file == str(tmp_path / "oss02.yaml") and ls.errors[0].line == 16


def test_identical_route_sections_are_parsed_once(tmp_path: Path) -> None:
    text = (DEMO / "oss01.yaml").read_text()
    (tmp_path / "oss01.yaml").write_text(text)
    (tmp_path / "oss02.yaml").write_text(
        text.replace("10.10.1.1@o2ib100", "10.10.1.2@o2ib100").replace(
            "send_count: 88123", "send_count: 1"
        )
    )
    ls = read_live(str(tmp_path))
    a, b = ls.hosts["oss01"], ls.hosts["oss02"]
    assert a.routes is b.routes  # shared: compared once by the diff
    assert a.nets is not None and b.nets is not None
    assert a.nets.nids != b.nets.nids


def test_read_generated_tree(tmp_path: Path) -> None:
    from lnetgen.api import generate, write_output

    gen = generate(str(ROOT / "sites" / "demo.yaml"), None, "lnetctl,modprobe")
    write_output(gen, str(tmp_path / "out"))
    ls = read_live(str(tmp_path / "out"))
    assert ls.generated is not None and ls.generated["site"] == "demo"
    assert len(ls.hosts) == 130
    assert ls.hosts["nid00001"] is ls.hosts["nid00096"]  # one class file, one state
    assert ls.hosts["nid00001"].formats == (live.CONFIG,)  # lnetctl preferred to modprobe
    assert ls.hosts["rtr01"].routing is True and ls.hosts["oss01"].routing is False


# ----------------------------------------------------------------------------- block YAML


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _pyyaml(text: str) -> object:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return None if node is None else _plain(live._from_node(node, [10**6]))


_KEYS = st.sampled_from(
    [
        "net",
        "net type",
        "local NI(s)",
        "nid",
        "gateway",
        "hop",
        "cpt[0]",
        "Multi-Rail",
        "0",
        "enable",
        "peer ni",
        "lnd tunables",
    ]
)
_SCALARS = st.one_of(
    st.sampled_from(
        [
            "o2ib1",
            "10.0.0.1@o2ib1",
            "-1",
            "True",
            "ib0",
            "[0,1]",
            "up",
            "",
            "a b",
            "x:y",
            "null",
            "~",
            "#c",
            "a #b",
            "k: v",
            "- x",
            "-",
        ]
    ),
    st.text(alphabet="abc019@.-_:# '\"[]", max_size=8),
)


def _tree(depth: int) -> st.SearchStrategy[object]:
    if depth == 0:
        return _SCALARS
    sub = _tree(depth - 1)
    return st.one_of(
        _SCALARS,
        st.dictionaries(_KEYS, sub, min_size=1, max_size=4),
        st.lists(
            st.one_of(sub, st.dictionaries(_KEYS, sub, min_size=1, max_size=3)),
            min_size=1,
            max_size=3,
        ),
    )


def _render(value: object, ind: int, dash_pad: int, out: list[str], head: str = "") -> None:
    """Block YAML the way lnetctl lays it out; scalars written raw (they may be odd YAML)."""
    pad = " " * ind
    if isinstance(value, dict):
        first = True
        for k, v in value.items():
            prefix = head if first else pad
            first = False
            if isinstance(v, dict | list) and v:
                out.append(f"{prefix}{k}:")
                _render(v, ind + 4, dash_pad, out)
            else:
                out.append(f"{prefix}{k}: {v}" if v != "" else f"{prefix}{k}:")
    elif isinstance(value, list):
        for item in value:
            dash = pad + "-" + " " * dash_pad
            if isinstance(item, dict) and item:
                _render(item, ind + 1 + dash_pad, dash_pad, out, head=dash)
            elif isinstance(item, list) and item:
                out.append(pad + "-")
                _render(item, ind + 2, dash_pad, out)
            else:
                out.append(f"{dash}{item}".rstrip())
    else:
        out.append(f"{head or pad}{value}")


@settings(max_examples=120, deadline=None)
@given(_tree(3), st.sampled_from([1, 5]))
def test_block_reader_agrees_with_pyyaml(value: object, dash_pad: int) -> None:
    lines: list[str] = []
    _render({"route": value}, 0, dash_pad, lines)
    text = "\n".join(lines) + "\n"
    try:
        expected = _pyyaml(text)
    except (yaml.YAMLError, live._EntryError):
        with pytest.raises(live._EntryError):
            live._yaml_parse(text)
        return
    try:
        got = _plain(live._block_parse(text))
    except live._Unsupported:
        got = _plain(live._yaml_parse(text))
    assert got == expected


@settings(max_examples=60, deadline=None)
@given(_tree(3))
def test_block_reader_agrees_with_pyyaml_on_safe_dump(value: object) -> None:
    text = yaml.safe_dump({"net": value}, default_flow_style=False, indent=4)
    assert _plain(live._yaml_parse(text)) == _pyyaml(text)


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


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("route: " + "[" * 5000 + "]" * 5000 + "\n", 1),  # flow: PyYAML, depth counted first
        ("net:\n  " + "- " * 5000 + "x\n", 2),  # block sequence of sequences
        ("net:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300)), 101),  # mappings
        ("route: &a [*a]\n", 1),  # an alias inside itself
    ],
    ids=["flow", "block-seq", "block-map", "alias-cycle"],
)
def test_deep_nesting_is_an_error_not_a_crash(text: str, line: int) -> None:
    with pytest.raises(LiveParseError) as err:
        parse_dump(text, "deep.yaml")
    d = err.value.diagnostic
    assert (d.code, d.line) == ("E-LIVE-PARSE", line)
    assert "nested too deeply" in d.message


def test_nesting_up_to_the_limit_is_read() -> None:
    deep = "[" * (live.MAX_DEPTH - 1) + "]" * (live.MAX_DEPTH - 1)
    with pytest.raises(LiveParseError, match="entries should be mappings"):
        parse_dump(f"route: {deep}\n", "ok.yaml")  # refused by the route normalizer, not depth


def test_line_numbers_over_many_sections() -> None:
    """Sections are numbered one after the other (the old count from the start was quadratic)."""
    keys = "".join(f"k{i}: v\n" for i in range(5000))
    text = "route:\n    - net: gni\n      gateway: 1@gni\n" + keys + "route:\n"
    with pytest.raises(LiveParseError) as err:
        parse_dump(text, "many.yaml")
    assert err.value.diagnostic.line == 5004
    with pytest.raises(LiveParseError) as err:
        parse_dump(text.replace("k4000: v", "k4000: {", 1), "many.yaml")
    assert err.value.diagnostic.line == 4005  # where the unclosed flow mapping ends


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
    for logical in live._logical_lines(text):
        for i, ch in enumerate(logical.text):
            line, col = logical.at(i)
            assert rows[line - 1][col - 1] == ch


def test_out_of_memory_is_a_dump_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object) -> HostState:
        raise MemoryError

    monkeypatch.setattr(live, "_parse_yaml", boom)
    with pytest.raises(LiveParseError) as err:
        parse_dump("net:\n", "big.yaml", host="rtr01")
    d = err.value.diagnostic
    assert d.code == "E-LIVE-SIZE" and "memory" in d.message and "rtr01" in d.message


@pytest.mark.parametrize(
    "name",
    [
        "rtr[01.yaml",
        "rtr01]",
        "rtr\n01.yaml",
        "rtr01.\x1b[2J.yaml",
        "rtr01.yaml\n",
        "-rtr01",
        "rtr_01",
        "\u043ess01.yaml",
        "x" * 64,
        "nid@gni",
    ],
)
def test_host_of_refuses_names_that_are_not_host_names(name: str) -> None:
    with pytest.raises(LiveParseError) as err:
        live.host_of("/d/" + name)
    d = err.value.diagnostic
    assert d.code == "E-LIVE-NAME" and d.line == 0
    assert d.file.startswith("/d/") and d.file.isprintable() and d.message.isprintable()


def test_bad_file_names_are_unreadable_dumps(tmp_path: Path) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "rtr[01.yaml")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss04\n.conf")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"] and ls.error_hosts == set()
    assert [(os.path.basename(d.file), d.code) for d in ls.errors] == [
        ("oss04\\n.conf", "E-LIVE-NAME"),
        ("rtr[01.yaml", "E-LIVE-NAME"),
    ]
    assert "'rtr[01' is not a host name" in ls.errors[1].message
    one = read_live(str(tmp_path / "rtr[01.yaml"))
    assert one.hosts == {} and [d.code for d in one.errors] == ["E-LIVE-NAME"]


def test_special_files_are_refused_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "rtr01.yaml")  # nobody writes: opening it for reading would block
    os.symlink("/dev/zero", tmp_path / "rtr02.yaml")  # never ends, and its size reads 0
    os.symlink(tmp_path / "nowhere", tmp_path / "rtr03.yaml")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"]
    assert ls.error_hosts == {"rtr01", "rtr02", "rtr03"}
    got = {os.path.basename(d.file): (d.code, d.message) for d in ls.errors}
    assert got["rtr01.yaml"] == ("E-LIVE-READ", "is a named pipe, not a regular file")
    assert got["rtr02.yaml"] == ("E-LIVE-READ", "is a character device, not a regular file")
    assert got["rtr03.yaml"][0] == "E-LIVE-READ" and "No such file" in got["rtr03.yaml"][1]
    for path, what in ((tmp_path / "rtr01.yaml", "named pipe"), (Path("/dev/zero"), "device")):
        with pytest.raises(InputError) as err:
            read_live(str(path))
        assert err.value.diagnostics[0].code == "E-LIVE-PATH"
        assert what in err.value.diagnostics[0].message


def test_dump_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    monkeypatch.setattr(live, "MAX_FILE_BYTES", 10)
    ls = read_live(str(tmp_path))
    assert [d.code for d in ls.errors] == ["E-LIVE-SIZE"] and ls.error_hosts == {"oss03"}


def _clip_id(text: str) -> str:
    return ascii(text[:30])


def _tree_with_manifest(tmp_path: Path, manifest: object) -> Path:
    (tmp_path / "lnetctl").mkdir()
    shutil.copy(DEMO / "oss03.conf", tmp_path / "lnetctl" / "x.yaml")
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    return tmp_path


def _entry(**kw: object) -> dict[str, object]:
    return {"path": "lnetctl/x.yaml", "format": "lnetctl", "hosts": "oss03", **kw}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"files": 5}, '"files" is a list of objects'),
        ([], '"files" is a list of objects'),
        ({"files": [5]}, '"files" is a list of objects'),
        ({"files": [_entry(path=5)]}, 'files[0] needs a text "path" and "hosts"'),
        ({"files": [_entry(hosts=["oss03"])]}, 'files[0] needs a text "path" and "hosts"'),
        ({"files": [_entry(hosts="n[1-999999999]")]}, "'n[1-999999999]' of 'lnetctl/x.yaml'"),
        ({"files": [_entry(hosts="rtr[01")]}, "bad hosts 'rtr[01'"),
        ({"files": [_entry(hosts="rtr_01")]}, "'rtr_01' is not a host name"),
        ({"files": [_entry(path="lnetctl/x\n.yaml")]}, "'lnetctl/x\\n.yaml' is empty or holds"),
        ({"files": [_entry(path="lnetctl/\x00")]}, "cannot be printed"),
        ({"files": [_entry(path="/etc/passwd")]}, "leaves the directory"),
        ("[" * 100_000 + "]" * 100_000, "not an lnetgen manifest"),  # JSON nested too deeply
        ('{"files": [', "not an lnetgen manifest"),
        (b"\xff\xfe".decode("latin-1"), "not an lnetgen manifest"),
        ({"files": [_entry(format="plan")]}, "lists no lnetctl or modprobe files"),
    ],
    ids=lambda v: _clip_id(v) if isinstance(v, str) else None,
)
def test_bad_manifests_are_path_errors(tmp_path: Path, manifest: object, message: str) -> None:
    path = _tree_with_manifest(tmp_path, manifest)
    with pytest.raises(InputError) as err:
        read_live(str(path))
    d = err.value.diagnostics[0]
    assert d.code == "E-LIVE-PATH" and message in d.message, d.format()
    assert d.format().isprintable() and len(d.format()) < 500


def test_manifest_hosts_are_counted_over_all_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "MAX_MANIFEST_HOSTS", 100)
    files = [_entry(hosts="n[1-60]"), _entry(path="lnetctl/y.yaml", hosts="m[1-60]")]
    with pytest.raises(InputError) as err:
        read_live(str(_tree_with_manifest(tmp_path, {"files": files})))
    assert "at most 100 in all" in err.value.diagnostics[0].message


def test_manifest_entry_linked_to_a_device(tmp_path: Path) -> None:
    path = _tree_with_manifest(tmp_path, {"files": [_entry(hosts="oss[03-04]")]})
    os.remove(path / "lnetctl" / "x.yaml")
    os.symlink("/dev/zero", path / "lnetctl" / "x.yaml")
    ls = read_live(str(path))
    assert ls.hosts == {} and ls.error_hosts == {"oss03", "oss04"}
    assert [(d.code, d.message) for d in ls.errors] == [
        ("E-LIVE-READ", "is a character device, not a regular file")
    ]


def test_manifest_fields_are_shown_safely(tmp_path: Path) -> None:
    manifest = {"site": "demo\x1b[2J", "strategy": {"x": 1}, "files": [_entry()]}
    ls = read_live(str(_tree_with_manifest(tmp_path, manifest)))
    assert ls.generated is not None
    assert ls.generated["site"] == "demo\\x1b[2J" and ls.generated["strategy"] == ""
    assert list(ls.hosts) == ["oss03"]
