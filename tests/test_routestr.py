"""``routes=`` / ``networks=`` strings: the kernel grammar (accepted and rejected strings from
the format reference) and the producer's round trips, as tables and hypothesis properties."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen.routestr import (
    MODULE_PARAM_MAX,
    KRoute,
    NetworksSyntaxError,
    RouteBudgetError,
    RouteSyntaxError,
    effective_routes,
    expand_brackets,
    fold_gateways,
    fold_nets,
    fold_numbers,
    format_networks,
    format_routes,
    param_fits,
    parse_networks,
    parse_routes,
    parse_routes_ordered,
    route_conflicts,
)

PROPS = settings(max_examples=200, deadline=None)


def R(net: str, gw: str, hop: int = -1, prio: int = 0) -> KRoute:
    return KRoute(net, gw, hop, prio)


# ----------------------------------------------------------------------------- expansion


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("10@gni", ["10@gni"]),
        ("[2-10/2]@gni", ["2@gni", "4@gni", "6@gni", "8@gni", "10@gni"]),
        ("[8-14/2]@gni", ["8@gni", "10@gni", "12@gni", "14@gni"]),
        ("[5-5/3]", ["5"]),
        ("o2ib[1-4]", ["o2ib1", "o2ib2", "o2ib3", "o2ib4"]),
        ("[tcp,o2ib]", ["tcp", "o2ib"]),
        ("[o2ib1,gni]", ["o2ib1", "gni"]),
        (
            "10.0.[1-2].[3-4]@o2ib",
            ["10.0.1.3@o2ib", "10.0.1.4@o2ib", "10.0.2.3@o2ib", "10.0.2.4@o2ib"],
        ),
        ("[01-03]", ["1", "2", "3"]),  # ranges are reprinted with %d
        ("[01,02]", ["01", "02"]),  # single numbers are literal items
        ("[1-x]", ["1-x"]),  # not %d-%d: a literal
        ("[+1-3]", ["+1-3"]),  # the kernel's %d takes no '+': a literal
        ("a[b[c]d]", ["abcd"]),  # first '[' and the first ']' after it; re-scanned
        ("x]y", ["x]y"]),
        ("[1,3-4,7-11/2]", ["1", "3", "4", "7", "9", "11"]),
    ],
)
def test_expand_accepts(token: str, expected: list[str]) -> None:
    assert expand_brackets(token) == expected


@pytest.mark.parametrize(
    ("token", "offset", "words"),
    [
        ("[1-10/2]@gni", 1, "does not divide"),
        ("[1-3/0]@gni", 1, "stride 0"),
        ("[1-3/-1]@gni", 1, "negative"),
        ("[-1-3]@gni", 1, "negative"),
        ("[1--3]@gni", 1, "negative"),
        ("[3-1]@gni", 1, "below"),
        ("[1-3x]@gni", 1, "junk"),
        ("[1-3/2x]@gni", 1, "junk"),
        ("[1-3/]@gni", 1, "junk"),
        ("[]@gni", 1, "empty item"),
        ("[1,]@gni", 3, "empty item"),
        ("[,1]@gni", 1, "empty item"),
        ("10.0.0.[1-2@o2ib", 7, "closing"),
        ("[1-2][3-4", 5, "closing"),
        ("[0-3000000000]", 1, "exceeds"),
    ],
)
def test_expand_rejects(token: str, offset: int, words: str) -> None:
    with pytest.raises(RouteSyntaxError, match=words) as info:
        expand_brackets(token)
    assert info.value.offset == offset


# ----------------------------------------------------------------------------- routes= parser

REFERENCE_FGR = (
    "o2ib1 1 [10-13]@gni; o2ib2 1 [14-17]@gni; o2ib1 1 [14-17]@gni:1; o2ib2 1 [10-13]@gni:1"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("  ;\n ; # only a comment\n", []),
        (
            "gni 1 10.10.1.[1-4]@o2ib1",
            [R("gni", f"10.10.1.{i}@o2ib1", 1) for i in range(1, 5)],
        ),
        (  # priority after a range applies to every expanded gateway
            "gni 1 10.0.0.[1-2]@o2ib1:5",
            [R("gni", "10.0.0.1@o2ib1", 1, 5), R("gni", "10.0.0.2@o2ib1", 1, 5)],
        ),
        (  # no hop: -1, not 1
            "o2ib 10@gni",
            [R("o2ib", "10@gni")],
        ),
        (  # token 2 is a hop count only when it is 1..255
            "o2ib 255 10@gni",
            [R("o2ib", "10@gni", 255)],
        ),
        (
            "[tcp,o2ib] 2 [8-14/2]@gni",
            [R(n, f"{a}@gni", 2) for n in ("o2ib", "tcp") for a in (10, 12, 14, 8)],
        ),
        (
            "o2ib[1-2] 1 [10-11]@gni",
            [R(f"o2ib{n}", f"{a}@gni", 1) for n in (1, 2) for a in (10, 11)],
        ),
        (  # net names canonicalise (o2ib0 == o2ib), leading zeros in net numbers
            "o2ib0 1 10@gni; o2ib01 1 10@gni",
            [R("o2ib", "10@gni", 1), R("o2ib1", "10@gni", 1)],
        ),
        (
            "gni 10.0.[1-2].[3-4]@o2ib",
            [R("gni", f"10.0.{c}.{d}@o2ib") for c in (1, 2) for d in (3, 4)],
        ),
        (  # comments run to the next separator; \n and \r separate; tabs are spaces
            "gni\t1 10.0.0.1@o2ib # backup: 10.0.0.9@o2ib\rtcp 3 5@gni",
            [R("gni", "10.0.0.1@o2ib", 1), R("tcp", "5@gni", 3)],
        ),
        (  # no '@' means @tcp; leading zeros in octets; hex numeric addresses
            "gni 010.0.0.1; o2ib 0x1a@gni",
            [R("gni", "10.0.0.1@tcp"), R("o2ib", "26@gni")],
        ),
        (  # several gateway tokens in one statement
            "gni 1 10.0.0.1@o2ib 10.0.0.2@o2ib",
            [R("gni", "10.0.0.1@o2ib", 1), R("gni", "10.0.0.2@o2ib", 1)],
        ),
        (  # priority inside the brackets differs per expansion; the last parsed one wins
            "gni 10.0.0.1@o2ib:[1-2]",
            [R("gni", "10.0.0.1@o2ib", -1, 2)],
        ),
    ],
)
def test_parse_routes_accepts(text: str, expected: list[KRoute]) -> None:
    assert parse_routes(text) == sorted(expected)


def test_reference_fgr_example() -> None:
    routes = parse_routes(REFERENCE_FGR)
    assert len(routes) == 16
    assert R("o2ib1", "10@gni", 1, 0) in routes
    assert R("o2ib1", "14@gni", 1, 1) in routes
    assert R("o2ib2", "10@gni", 1, 1) in routes


@pytest.mark.parametrize(
    ("text", "offset", "words"),
    [
        ("gni [1-10/2]@o2ib", 5, "does not divide"),
        ("lo 1 10@gni", 0, "loopback"),
        ("gni 1 0@lo", 6, "loopback"),
        ("o2ib 1 5@lo", 7, "loopback"),
        ("gni 1 1@gni", 6, "target net"),
        ("[gni,o2ib] 1 10.0.0.1@o2ib", 13, "target net"),
        ("gni", 3, "no gateway"),
        ("gni 1", 5, "no gateway"),
        ("gni 0 10.0.0.1@o2ib", 4, "hop count"),
        ("gni 256 10.0.0.1@o2ib", 4, "hop count"),
        ("gni -1 10.0.0.1@o2ib", 4, "bad gateway"),
        ("gni 1 10.0.0.1@o2ib:x", 20, "bad priority"),
        ("gni 1 10.0.0.1@o2ib:", 20, "bad priority"),
        ("gni 1 10.0.0.1@o2ib:-1", 20, "bad priority"),
        ("gni 1 10.0.0.1@o2ib:4294967296", 20, "exceeds"),
        ("gni 1 10.0.0.256@o2ib", 6, "IPv4"),
        ("gni 1 10@o2ib", 6, "IPv4"),
        ("gni 1 x@gni", 6, "bad gateway"),
        ("gni 1 10.0.0.1@elan", 6, "removed"),
        ("foo 1 10@gni", 0, "unknown LND"),
        ("o2ib70000 1 10@gni", 0, "65535"),
        ("o2ib1; gni 1 [1-3x]@o2ib", 5, "no gateway"),
        ("o2ib1 1 10@gni; gni 1 [1-3x]@o2ib", 23, "junk"),
        ("gni 1 10.0.[1-2]@o2ib", 6, "IPv4"),
        ("gni 1 [0-5000]@o2ib1", 6, "text buffers"),
    ],
)
def test_parse_routes_rejects(text: str, offset: int, words: str) -> None:
    with pytest.raises(RouteSyntaxError, match=words) as info:
        parse_routes(text)
    assert info.value.offset == offset
    assert "^" in info.value.caret(text)


def test_error_is_value_error_with_message_and_offset() -> None:
    with pytest.raises(ValueError, match=r"at offset 5") as info:
        parse_routes("gni [1-10/2]@o2ib")
    assert isinstance(info.value, RouteSyntaxError)
    assert info.value.message.startswith("range '1-10/2'")


def test_statement_priority_is_the_last_gateways() -> None:
    # the kernel keeps one priority variable per statement: the last gateway parsed sets it
    text = "gni 1 10.0.0.1@o2ib:1 10.0.0.2@o2ib"
    assert parse_routes(text) == [R("gni", "10.0.0.1@o2ib", 1, 0), R("gni", "10.0.0.2@o2ib", 1, 0)]
    with pytest.raises(RouteSyntaxError, match="last priority") as info:
        parse_routes(text, strict=True)
    assert info.value.offset == 6


def test_duplicates_first_wins() -> None:
    text = "gni 1 10.0.0.1@o2ib; gni 2 10.0.0.1@o2ib:3; gni 1 10.0.0.1@o2ib"
    assert parse_routes_ordered(text) == [
        R("gni", "10.0.0.1@o2ib", 1),
        R("gni", "10.0.0.1@o2ib", 2, 3),
        R("gni", "10.0.0.1@o2ib", 1),
    ]
    assert parse_routes(text) == [R("gni", "10.0.0.1@o2ib", 1), R("gni", "10.0.0.1@o2ib", 2, 3)]
    assert effective_routes(text) == [R("gni", "10.0.0.1@o2ib", 1)]
    with pytest.raises(RouteSyntaxError, match="keeps the first") as info:
        parse_routes(text, strict=True)
    assert info.value.offset == text.index("10.0.0.1@o2ib:3")
    assert route_conflicts(parse_routes(text)) == [
        (R("gni", "10.0.0.1@o2ib", 1), R("gni", "10.0.0.1@o2ib", 2, 3))
    ]


def _kernel_bytes(n: int) -> int:
    """Live text buffers for 'o2ib 1 [0-n]@gni' at its peak: 20-byte header + text + NUL each:
    the statement, the net token, the gateway token (still alive while its expansions are
    allocated) and every expanded gateway."""
    stmt, tok = f"o2ib 1 [0-{n}]@gni", f"[0-{n}]@gni"
    texts = [stmt, "o2ib", tok] + [f"{k}@gni" for k in range(n + 1)]
    return sum(20 + len(t) + 1 for t in texts)


def test_budget_counts_like_the_kernel() -> None:
    n = max(k for k in range(3000) if _kernel_bytes(k) <= 64 * 1024)
    assert n == 2293
    assert len(parse_routes(f"o2ib 1 [0-{n}]@gni")) == n + 1
    with pytest.raises(RouteBudgetError, match="text buffers") as info:
        parse_routes(f"o2ib 1 [0-{n + 1}]@gni")
    assert info.value.offset == 7
    # later statements' buffers are alive too: a long tail tips the same statement over
    with pytest.raises(RouteBudgetError):
        parse_routes(f"o2ib 1 [0-{n}]@gni; " + "; ".join(["tcp 1 1@gni"] * 3))


# ----------------------------------------------------------------------------- folding


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ([5], "5"),
        ([1, 2], "1-2"),
        ([1, 3], "1,3"),
        ([1, 3, 5], "1,3,5"),  # a stride that saves no byte is not used
        ([10, 12, 14, 16], "10-16/2"),
        ([10, 11, 12, 13, 20], "10-13,20"),
        ([1, 2, 3, 4, 6, 8, 10, 12, 20], "1-4,6-12/2,20"),
        ([2**31 - 1, 2**31, 2**31 + 1], f"{2**31 - 1},{2**31},{2**31 + 1}"),
    ],
)
def test_fold_numbers(numbers: list[int], expected: str) -> None:
    assert fold_numbers(numbers) == expected


@pytest.mark.parametrize(
    ("nids", "expected"),
    [
        (["10@gni", "11@gni", "12@gni", "13@gni", "20@gni"], ["[10-13,20]@gni"]),
        (["27@gni"], ["27@gni"]),
        ([f"10.10.1.{i}@o2ib1" for i in (1, 2, 3, 4)], ["10.10.1.[1-4]@o2ib1"]),
        (
            [f"10.10.{c}.{d}@o2ib1" for c in (1, 2) for d in (1, 2, 3, 4)] + ["10.10.3.7@o2ib1"],
            ["10.10.[1-2].[1-4]@o2ib1", "10.10.3.7@o2ib1"],
        ),
        (["10.0.0.1@o2ib", "10.0.0.2@o2ib", "5@gni"], ["5@gni", "10.0.0.[1-2]@o2ib"]),
        (["010.0.0.1@o2ib", "10.0.0.1@o2ib"], ["10.0.0.1@o2ib"]),
    ],
)
def test_fold_gateways(nids: list[str], expected: list[str]) -> None:
    assert fold_gateways(nids) == expected


def test_fold_nets() -> None:
    assert fold_nets(["o2ib2", "o2ib1", "tcp", "o2ib3", "gni"]) == ["gni", "o2ib[1-3]", "tcp"]
    assert fold_nets(["o2ib0", "o2ib1"]) == ["o2ib[0-1]"]


# ----------------------------------------------------------------------------- routes= producer


def test_format_reference_layout() -> None:
    routes = parse_routes(REFERENCE_FGR)
    text = format_routes(routes)
    assert text == (
        "o2ib1 1 [10-13]@gni; o2ib1 1 [14-17]@gni:1; o2ib2 1 [14-17]@gni; o2ib2 1 [10-13]@gni:1"
    )
    assert parse_routes(text) == routes


def test_format_details() -> None:
    routes = [R("gni", f"10.10.1.{i}@o2ib1", 1, 1) for i in (1, 2, 3, 4)]
    assert format_routes(routes) == "gni 1 10.10.1.[1-4]@o2ib1:1"
    assert format_routes([R("gni", "10.10.1.1@o2ib1")]) == "gni 10.10.1.1@o2ib1"
    assert format_routes([]) == ""
    # several gateway tokens: the priority goes after each
    two = [R("gni", "10.10.1.1@o2ib1", 1, 2), R("gni", "10.10.2.7@o2ib1", 1, 2)]
    assert format_routes(two) == "gni 1 10.10.1.1@o2ib1:2 10.10.2.7@o2ib1:2"
    # canonicalised on the way out
    assert format_routes([KRoute("o2ib0", "0x1a@gni", 1)]) == "o2ib 1 26@gni"


def test_format_merge_nets() -> None:
    routes = [R(f"o2ib{n}", f"{g}@gni", 1) for n in (1, 2, 3) for g in (10, 11, 12, 13)]
    assert format_routes(routes, merge_nets=True) == "o2ib[1-3] 1 [10-13]@gni"
    assert parse_routes(format_routes(routes, merge_nets=True)) == sorted(routes)


@pytest.mark.parametrize(
    "route",
    [
        KRoute("lo", "10@gni"),
        KRoute("gni", "10@gni"),
        KRoute("gni", "0@lo"),
        KRoute("gni", "10.0.0.1@o2ib", 0),
        KRoute("gni", "10.0.0.1@o2ib", 256),
        KRoute("gni", "10.0.0.1@o2ib", 1, -1),
        KRoute("gni", "10.0.0.1@o2ib", 1, 2**32),
        KRoute("gni", "10.0.0.1@elan"),
    ],
)
def test_format_rejects(route: KRoute) -> None:
    with pytest.raises(ValueError):
        format_routes([route])


def test_format_splits_to_fit_kernel_buffers() -> None:
    routes = [R("o2ib1", f"{i}@gni", 1) for i in range(0, 30000, 3)]
    text = format_routes(routes)
    assert text.count(";") >= 4
    assert param_fits(text)
    assert parse_routes(text) == sorted(routes)


def test_kroute_make() -> None:
    assert KRoute.make("o2ib0", "010.0.0.1@tcp", 1, 3) == R("o2ib", "10.0.0.1@tcp", 1, 3)
    with pytest.raises(ValueError, match="target net"):
        KRoute.make("tcp", "10.0.0.1")


def test_param_fits() -> None:
    assert MODULE_PARAM_MAX == 1024
    assert param_fits("x" * 1024)
    assert not param_fits("x" * 1025)


# ----------------------------------------------------------------------------- networks=


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("o2ib1(ib0),gni(ipogif0)", [("o2ib1", ("ib0",)), ("gni", ("ipogif0",))]),
        ("o2ib1(ib0[0,1],ib1[2,3])", [("o2ib1", ("ib0", "ib1"))]),
        ("o2ib0 ( ib0 , ib1 ) [0-3/1], tcp", [("o2ib", ("ib0", "ib1")), ("tcp", ())]),
        ("o2ib1[0]", [("o2ib1", ())]),
        ("lo, tcp(eth0)", [("tcp", ("eth0",))]),
        ("o2ib(ib0),o2ib(ib1)", [("o2ib", ("ib0", "ib1"))]),
        ("tcp(eth0.100),", [("tcp", ("eth0.100",))]),
        ("", []),
    ],
)
def test_parse_networks_accepts(text: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert parse_networks(text) == expected


@pytest.mark.parametrize(
    ("text", "offset", "words"),
    [
        ("o2ib1(ib0", 5, "closing"),
        ("o2ib1()", 6, "missing interface"),
        ("o2ib1(ib0,)", 10, "ends with"),
        ("o2ib1(ib0 ib1)", 10, "unexpected"),
        ("o2ib1:1", 5, "unexpected ':'"),
        ("o2ib1 junk", 6, "silently ignore"),
        ("o2ib1(ib0)(ib1)", 10, r"unexpected '\('"),
        ("o2ib1[x]", 5, "CPT"),
        ("o2ib1[0", 5, "closing"),
        (",tcp", 0, "missing network"),
        ("foo(eth0)", 0, "unknown LND"),
        ("o2ib1(ib0,ib0)", 10, "twice"),
        ('tcp("eth0")', 4, "interface name"),
    ],
)
def test_parse_networks_rejects(text: str, offset: int, words: str) -> None:
    with pytest.raises(NetworksSyntaxError, match=words) as info:
        parse_networks(text)
    assert info.value.offset == offset


def test_format_networks() -> None:
    pairs = [
        ("o2ib1", "ib0"),
        ("gni", "ipogif0"),
        ("o2ib1", "ib1"),
        ("o2ib0", ""),
        ("gni", "ipogif0"),
    ]
    assert format_networks(pairs) == "o2ib1(ib0,ib1),gni(ipogif0),o2ib"
    with pytest.raises(ValueError):
        format_networks([("lo", "")])
    with pytest.raises(ValueError):
        format_networks([("tcp", "eth0;rm")])


# ----------------------------------------------------------------------------- properties

_ITEM = re.compile(r"^(\d+)(?:-(\d+)(?:/(\d+))?)?$")


def _check_items(token: str) -> None:
    """Every bracket item is n, a-b or a-b/s with s > 1 dividing b-a; no '*'."""
    assert "*" not in token
    for body in re.findall(r"\[([^\]]*)\]", token):
        for item in body.split(","):
            m = _ITEM.match(item)
            assert m, item
            if m.group(2) is not None:
                lo, hi = int(m.group(1)), int(m.group(2))
                assert lo < hi <= 2**31 - 1, item
                if m.group(3) is not None:
                    stride = int(m.group(3))
                    assert stride > 1 and (hi - lo) % stride == 0, item


def _expand_all(tokens: list[str]) -> list[str]:
    return [nid for tok in tokens for nid in expand_brackets(tok)]


numeric_nids = st.sets(
    st.one_of(st.integers(0, 400), st.integers(0, 2**32 - 1)), min_size=1, max_size=60
).map(lambda s: [f"{n}@gni" for n in s])

ipv4_nids = st.sets(
    st.tuples(
        st.sampled_from([10, 172]),
        st.sampled_from([0, 10]),
        st.integers(0, 5),
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=60,
).map(lambda s: [f"{a}.{b}.{c}.{d}@o2ib1" for a, b, c, d in s])


@PROPS
@given(st.one_of(numeric_nids, ipv4_nids))
def test_prop_fold_expands_back_exactly(nids: list[str]) -> None:
    tokens = fold_gateways(nids)
    expanded = _expand_all(tokens)
    assert len(expanded) == len(set(expanded))  # disjoint tokens
    assert set(expanded) == set(nids)
    for tok in tokens:
        _check_items(tok)
    assert fold_gateways(reversed(nids)) == tokens  # order-independent


@PROPS
@given(st.sets(st.integers(0, 60), min_size=1, max_size=7))
def test_prop_fold_numbers_is_byte_optimal(numbers: set[int]) -> None:
    """No partition of the sorted numbers into runs is shorter (brute force)."""
    v = sorted(numbers)

    def item(seg: list[int]) -> str | None:
        if len(seg) == 1:
            return str(seg[0])
        step = seg[1] - seg[0]
        if any(b - a != step for a, b in itertools.pairwise(seg)):
            return None
        return f"{seg[0]}-{seg[-1]}" if step == 1 else f"{seg[0]}-{seg[-1]}/{step}"

    best = None
    for cuts in itertools.product([False, True], repeat=len(v) - 1):
        segs, cur = [], [v[0]]
        for x, cut in zip(v[1:], cuts, strict=True):
            if cut:
                segs.append(cur)
                cur = []
            cur.append(x)
        segs.append(cur)
        items = [item(s) for s in segs]
        if all(i is not None for i in items):
            length = len(",".join(i for i in items if i is not None))
            best = length if best is None else min(best, length)
    folded = fold_numbers(numbers)
    assert len(folded) == best
    assert sorted(int(x) for x in expand_brackets(f"[{folded}]")) == v


nets = st.sampled_from(["o2ib", "o2ib1", "o2ib2", "o2ib17", "gni", "tcp", "kfi3"])
gateways = st.one_of(
    st.integers(0, 40).map(lambda n: f"{n}@gni"),
    st.tuples(st.integers(1, 3), st.integers(1, 20)).map(lambda t: f"10.10.{t[0]}.{t[1]}@o2ib1"),
    st.tuples(st.integers(1, 2), st.integers(1, 9)).map(lambda t: f"192.168.{t[0]}.{t[1]}@tcp"),
)
routes_st = st.lists(
    st.builds(
        KRoute,
        nets,
        gateways,
        st.sampled_from([-1, 1, 2, 255]),
        st.sampled_from([0, 1, 7, 4294967295]),
    ).filter(lambda r: r.gateway.split("@")[1] != r.net),
    max_size=40,
)


@PROPS
@given(routes_st, st.booleans())
def test_prop_format_parse_round_trip(routes: list[KRoute], merge: bool) -> None:
    text = format_routes(routes, merge_nets=merge)
    assert parse_routes(text, strict=not route_conflicts(routes)) == sorted(set(routes))
    assert "*" not in text and "/0" not in text
    for stmt in text.split("; ") if text else []:
        for tok in stmt.split()[1:]:
            _check_items(tok)
    assert format_routes(list(reversed(routes)), merge_nets=merge) == text


_SEG = st.one_of(
    st.sampled_from(["a", "b.", "@x", "10."]).map(lambda s: (s, [s])),
    st.lists(
        st.one_of(
            st.tuples(st.integers(0, 30), st.integers(0, 6), st.integers(1, 4)).map(
                lambda t: (
                    f"{t[0]}-{t[0] + t[1] * t[2]}/{t[2]}",
                    [str(t[0] + k * t[2]) for k in range(t[1] + 1)],
                )
            ),
            st.tuples(st.integers(0, 30), st.integers(0, 5)).map(
                lambda t: (f"{t[0]}-{t[0] + t[1]}", [str(t[0] + k) for k in range(t[1] + 1)])
            ),
            st.sampled_from(["tcp", "o2ib", "7", "z-"]).map(lambda s: (s, [s])),
        ),
        min_size=1,
        max_size=3,
    ).map(
        lambda items: ("[" + ",".join(i for i, _ in items) + "]", [x for _, e in items for x in e])
    ),
)


@PROPS
@given(st.lists(_SEG, min_size=1, max_size=4))
def test_prop_expansion_is_a_product(segments: list[tuple[str, list[str]]]) -> None:
    """Bracket groups expand like an ordered cartesian product of their items."""
    token = "".join(text for text, _ in segments)
    expected = ["".join(p) for p in itertools.product(*(e for _, e in segments))]
    assert expand_brackets(token) == expected


iface = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("abeiz"),
    st.text("ab0129.", max_size=6),
)
net_pairs = st.lists(st.tuples(nets, st.one_of(st.just(""), iface)), max_size=8)


@PROPS
@given(net_pairs)
def test_prop_networks_round_trip(pairs: list[tuple[str, str]]) -> None:
    text = format_networks(pairs)
    grouped: dict[str, list[str]] = {}
    for net, ifc in pairs:
        canon = parse_networks(net)[0][0]
        have = grouped.setdefault(canon, [])
        if ifc and ifc not in have:
            have.append(ifc)
    assert parse_networks(text) == [(n, tuple(i)) for n, i in grouped.items()]


@PROPS
@given(st.text("o2ibgnitcpl0123456789.@:;#[]-/, \n\t", max_size=40))
def test_prop_parse_routes_fails_only_with_a_located_syntax_error(text: str) -> None:
    try:
        routes = parse_routes(text)
    except RouteSyntaxError as exc:
        assert 0 <= exc.offset <= len(text)
    else:
        assert all(r.hop == -1 or 1 <= r.hop <= 255 for r in routes)
        assert parse_routes(format_routes(routes)) == routes


@PROPS
@given(st.text("o2ibgnitcpl0123456789(),[]-: ", max_size=30))
def test_prop_parse_networks_fails_only_with_a_located_syntax_error(text: str) -> None:
    try:
        parsed = parse_networks(text)
    except NetworksSyntaxError as exc:
        assert 0 <= exc.offset <= len(text)
    else:
        pairs = [(n, i) for n, ifs in parsed for i in (ifs or ("",))]
        assert parse_networks(format_networks(pairs)) == parsed
