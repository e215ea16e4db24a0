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


def test_fold_large_contiguous() -> None:
    assert nodes.fold(f"nid{i:05d}" for i in range(1, 25713)) == "nid[00001-25712]"
    assert nodes.fold([]) == ""


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
