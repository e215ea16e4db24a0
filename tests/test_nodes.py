"""Node-set folding, net names and NIDs (lnetgen.nodes)."""

from __future__ import annotations

import pytest
from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import nodes

names = st.one_of(
    st.builds(
        lambda p, n, w: f"{p}{n:0{w}d}",
        st.sampled_from(["nid", "rtr", "oss", "c"]),
        st.integers(0, 3000),
        st.sampled_from([0, 1, 3, 5]),
    ),
    st.sampled_from(["login", "a1b2", "c0-0c1s2n3", "x", "n00", "n0"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(names, min_size=1, max_size=60))
def test_fold_matches_clustershell_and_expands_back(sample: list[str]) -> None:
    ns = NodeSet(resolver=RESOLVER_NOGROUP)
    ns.updaten(sample)
    folded = nodes.fold(sample)
    assert folded == str(ns)
    assert sorted(nodes.expand(folded)) == sorted(set(sample))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["nid", "rtr-", "a.b_", "x"]),
    st.lists(st.integers(0, 200), min_size=1, max_size=40),
    st.sampled_from([0, 1, 3, 5]),
)
def test_fold_of_one_prefix_is_what_clustershell_prints(
    prefix: str, numbers: list[int], width: int
) -> None:
    """The one-prefix shortcut (no parse) prints exactly ClusterShell's string."""
    sample = [f"{prefix}{n:0{width}d}" for n in numbers]
    ns = NodeSet(resolver=RESOLVER_NOGROUP)
    ns.updaten(sample)
    assert nodes.fold(sample) == str(ns)
    for name in sample:
        assert nodes.expand(name) == list(NodeSet(name, resolver=RESOLVER_NOGROUP))


def test_fold_large_contiguous() -> None:
    assert nodes.fold(f"nid{i:05d}" for i in range(1, 25713)) == "nid[00001-25712]"
    assert nodes.fold([]) == ""


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["nid", "rtr", "c"]),
            st.lists(st.tuples(st.integers(0, 20), st.integers(1, 4))),  # (length, step)
            st.sampled_from(["", "-s", "p"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_count_is_the_size_without_expanding(
    pieces: list[tuple[str, list[tuple[int, int]], str]],
) -> None:
    """Node sets of ranges that do not overlap: ``count`` is exact (each prefix used once, its
    ranges laid end to end with a gap so that none overlap)."""
    parts = []
    for k, (prefix, ranges, suffix) in enumerate(pieces):
        items, start = [], 1
        for length, step in ranges:
            stop = start + length * step
            items.append(f"{start}-{stop}/{step}" if length else str(start))
            start = stop + 2
        body = f"[{','.join(items)}]" if items else str(k)
        parts.append(f"{prefix}{k}x{body}{suffix}")
    text = ",".join(parts)
    assert nodes.count(text) == len(nodes.expand(text))


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("", 0),
        ("oss01", 1),
        ("nid[00001-25712]", 25712),
        ("n[1-3],m[1-2]", 5),
        ("n[1,3-5]", 4),
        ("r[1-3]c[1-4]", 12),
        ("n[1-10/3]", 4),
        ("n[1-900000000]", 900_000_000),  # counted, never expanded
        ("n[1-4],n[3-6]", 8),  # overlap: an upper bound
        ("n[1-3", 1),  # does not parse: nodeset() says so
    ],
)
def test_count(text: str, size: int) -> None:
    assert nodes.count(text) == size


@pytest.mark.parametrize("text", ["n[1-99999999999]", "n[0-1000000000]"])
def test_range_too_large_is_a_syntax_error(text: str) -> None:
    """ClusterShell refuses ranges of 10^9 and more with an AssertionError."""
    with pytest.raises(nodes.NodeSyntaxError, match="range too large"):
        nodes.nodeset(text)


def test_group_syntax_is_refused() -> None:
    with pytest.raises(nodes.NodeSyntaxError):
        nodes.nodeset("@oss")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("o2ib0", "o2ib"),
        ("o2ib", "o2ib"),
        ("o2ib00", "o2ib"),
        ("tcp1", "tcp1"),
        ("gni", "gni"),
        ("kfi65535", "kfi65535"),
    ],
)
def test_canonical_net(text: str, canonical: str) -> None:
    assert nodes.canonical_net(text) == canonical


@pytest.mark.parametrize("text", ["elan3", "o2ib65536", "ptl", "foo1", "1o2ib", ""])
def test_bad_net(text: str) -> None:
    with pytest.raises(nodes.NodeSyntaxError):
        nodes.parse_net(text)


def test_removed_lnd_says_so() -> None:
    with pytest.raises(nodes.NodeSyntaxError, match="removed"):
        nodes.parse_net("elan")


@pytest.mark.parametrize(
    ("folded", "ansible"),
    [
        ("nid[00001-00003,00007]", ["nid[00001:00003]", "nid00007"]),
        ("rtr[1-2],oss5", ["rtr[1:2]", "oss5"]),
    ],
)
def test_ansible_ranges(folded: str, ansible: list[str]) -> None:
    assert nodes.to_ansible(folded) == ansible
    assert nodes.from_ansible(ansible[0]).replace(":", "-") == nodes.from_ansible(ansible[0])


def test_clustershell_value_errors_are_syntax_errors() -> None:
    """'x[1-1aa---]' made ClusterShell raise a bare ValueError: a traceback from --oss, --fail
    or an inventory's node set."""
    with pytest.raises(nodes.NodeSyntaxError):
        nodes.nodeset("x[1-1aa---]")
