"""The fast reader of plain ``route:`` sections gives exactly ``block_parse``'s tree (values,
lines of every mapping, sequence and key) and declines everything else."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lnetgen.live.block_yaml import Map, Seq, block_parse, route_section


def _shape(v: Any) -> Any:
    """A tree with its line numbers, comparable with ==."""
    if isinstance(v, Map):
        return ("map", v.line, sorted((k, v.lines[k], _shape(x)) for k, x in v.items()))
    if isinstance(v, Seq):
        return ("seq", v.line, [_shape(x) for x in v])
    return v


_NET = st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True)
_GW = st.from_regex(r"[0-9A-Za-z.]{1,15}@[a-z]{1,5}[0-9]{0,5}", fullmatch=True)
_NUM = st.from_regex(r"-?[0-9]{1,10}", fullmatch=True)
_ENTRY = st.tuples(_NET, _GW, _NUM, st.from_regex(r"[0-9]{1,10}", fullmatch=True))


def _text(entries: list[tuple[str, str, str, str]]) -> str:
    return "route:\n" + "".join(
        f"    - net: {n}\n      gateway: {g}\n      hop: {h}\n      priority: {p}\n"
        for n, g, h, p in entries
    )


@given(st.lists(_ENTRY, min_size=1, max_size=6))
def test_fast_route_section_is_block_parse(entries: list[tuple[str, str, str, str]]) -> None:
    text = _text(entries)
    fast = route_section(text)
    if fast is None:  # declined (e.g. a net named null): block_parse decides
        return
    assert _shape(fast) == _shape(block_parse(text))


@given(st.lists(_ENTRY, min_size=1, max_size=3), st.integers(0, 200), st.characters())
def test_any_other_text_is_declined_or_equal(
    entries: list[tuple[str, str, str, str]], at: int, ch: str
) -> None:
    text = _text(entries)
    at = min(at, len(text))
    edited = text[:at] + ch + text[at:]
    fast = route_section(edited)
    if fast is not None:
        assert _shape(fast) == _shape(block_parse(edited))


def test_declines_what_it_does_not_know() -> None:
    base = (
        "route:\n    - net: o2ib1\n      gateway: 10.0.0.1@o2ib\n      hop: 1\n      priority: 0\n"
    )
    assert route_section(base) is not None
    for other in (
        base.replace("priority: 0\n", "priority: 0\n      state: up\n"),
        base.replace("net: o2ib1", "net: null"),
        base.replace("10.0.0.1@o2ib", "10.0.0.[1-2]@o2ib"),
        base.replace("10.0.0.1@o2ib", "'10.0.0.1@o2ib'"),
        base.rstrip("\n"),
        "route:\n",
        "net:\n" + base[7:],
    ):
        assert route_section(other) is None, other
