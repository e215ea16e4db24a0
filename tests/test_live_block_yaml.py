"""The fast block-YAML reader: it agrees with PyYAML on what lnetctl and PyYAML print, and
hostile nesting or sizes are located errors, never crashes."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen import live
from lnetgen.live import LiveParseError, parse_dump
from lnetgen.live.block_yaml import Unsupported, block_parse, from_node, yaml_parse
from lnetgen.live.errors import EntryError

# ----------------------------------------------------------------------------- block YAML


def _plain(value: object) -> object:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _pyyaml(text: str) -> object:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    return None if node is None else _plain(from_node(node, [10**6]))


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
    except (yaml.YAMLError, EntryError):
        with pytest.raises(EntryError):
            yaml_parse(text)
        return
    try:
        got = _plain(block_parse(text))
    except Unsupported:
        got = _plain(yaml_parse(text))
    assert got == expected


@settings(max_examples=60, deadline=None)
@given(_tree(3))
def test_block_reader_agrees_with_pyyaml_on_safe_dump(value: object) -> None:
    text = yaml.safe_dump({"net": value}, default_flow_style=False, indent=4)
    assert _plain(yaml_parse(text)) == _pyyaml(text)


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
