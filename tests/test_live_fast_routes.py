"""The byte-level route reader (lnetgen.live.fast_routes) gives the generic reader's table."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lnetgen.live.block_yaml import yaml_parse
from lnetgen.live.errors import EntryError
from lnetgen.live.fast_routes import route_table
from lnetgen.live.lnetctl_sections import norm_routes
from lnetgen.live.state import RouteTable

NETS = ["o2ib1", "o2ib", "o2ib0", "gni", "tcp2", "o2ib[1-2]", "lo", "null", "o2ib65536"]
GWS = ["10@gni", "10.0.0.1@o2ib1", "10.0.0.1@o2ib0", "12@gni1", "[10-11]@gni", "bad", "0@lo"]


@st.composite
def sections(draw: st.DrawFn) -> str:
    lines = ["route:"]
    for _ in range(draw(st.integers(1, 6))):
        lines += [
            f"    - net: {draw(st.sampled_from(NETS))}",
            f"      gateway: {draw(st.sampled_from(GWS))}",
            f"      hop: {draw(st.sampled_from(['1', '-1', '0', '256', '3']))}",
            f"      priority: {draw(st.sampled_from(['0', '1', '4294967296']))}",
        ]
        if draw(st.booleans()):
            lines.append(f"      state: {draw(st.sampled_from(['up', 'down', 'Down']))}")
        if draw(st.booleans()):
            lines.append("      type: single-hop")
    return "\n".join(lines) + "\n"


def _fields(t: RouteTable) -> tuple[object, ...]:
    """A table's contents (tables compare by identity)."""
    return (dict(t.routes), t.detailed, t.health, t.shows_state)


def _slow(text: str) -> object:
    try:
        return _fields(norm_routes(yaml_parse(text)["route"], 1))
    except EntryError:
        return "error"


@settings(max_examples=300, deadline=None)
@given(sections())
def test_fast_route_table_is_the_generic_one(text: str) -> None:
    fast = route_table(text.encode())
    slow = _slow(text)
    if fast is None:  # left to the generic reader: fine, as long as plain entries are read
        return
    assert slow != "error"
    assert _fields(fast) == slow


def test_plain_export_entries_take_the_fast_path() -> None:
    text = (
        "route:\n"
        "    - net: o2ib1\n      gateway: 10@gni\n      hop: 1\n      priority: 0\n"
        "      state: up\n      type: single-hop\n"
        "    - net: o2ib1\n      gateway: 11@gni\n      hop: 1\n      priority: 1\n"
        "      state: down\n      type: single-hop\n"
    )
    fast = route_table(text.encode())
    assert fast is not None and _fields(fast) == _slow(text)
    assert fast.routes == {("o2ib1", "10@gni"): (1, 0), ("o2ib1", "11@gni"): (1, 1)}
    assert fast.shows_state and fast.health  # the down gateway is a health note
    # what the fast path leaves alone
    for odd in ("    - net: o2ib[1-2]\n", "    - net: 'o2ib1'\n", "    - gateway: 10@gni\n"):
        assert route_table(("route:\n" + odd + "      hop: 1\n").encode()) is None


def test_bounded_reads_follow_the_file_not_the_limit(tmp_path: Path) -> None:
    """Reading a 2 MB dump under a 64 MiB limit set 67 MB aside (fh.read(limit + 1))."""
    import tracemalloc

    from lnetgen.bounded import read_at_most

    path = tmp_path / "f"
    path.write_bytes(b"x" * (3 << 20))
    tracemalloc.start()
    with path.open("rb") as fh:
        data = read_at_most(fh, 64 << 20)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(data) == 3 << 20 and peak < 8 << 20
    with path.open("rb") as fh:
        assert len(read_at_most(fh, 1 << 20)) == (1 << 20) + 1  # over: one byte more
    with (tmp_path / "empty").open("wb"):
        pass
    with (tmp_path / "empty").open("rb") as fh:
        assert read_at_most(fh, 10) == b""
