"""``verify``'s shortcuts change no finding: senders with the same nets and routes to a net
share how they reach it (``Prover.share_ways``) and the route reader keeps what it checked
(``fast_routes``' memos); a mutated demo tree gives the same result with both turned off."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lnetgen.live import fast_routes
from lnetgen.verify import VerifyResult, verify
from lnetgen.verify.reach import Prover


def _block(text: str, net: str) -> str:
    """The route entries of ``text`` to ``net``."""
    entry = rf"    - net: {net}\n      gateway: \S+\n      hop: -?\d+\n      priority: \d+\n"
    return "".join(re.findall(entry, text))


def _mutate(t: Path) -> tuple[str, str]:
    """Break the tree in ways that cached verdicts could get wrong; the names of the two
    clients given the same off-net gateway."""
    d = t / "lnetctl"
    a, b = sorted(d.glob("clients-*.yaml"))[:2]
    text_a, text_b = a.read_text(), b.read_text()
    net = re.findall(r"- net: (\S+)", text_a)[0]
    oss = sorted(d.glob("oss*.yaml"))[0].read_text()
    off_net = re.findall(r"gateway: (\S+)", oss)[0]  # a router NID on a storage net
    # a and b: the same routes to ``net``, the first through a gateway on no net of theirs
    bad = re.sub(r"gateway: \S+", f"gateway: {off_net}", _block(text_a, net), count=1)
    a.write_text(text_a.replace(_block(text_a, net), bad))
    b.write_text(text_b.replace(_block(text_b, net), bad) if _block(text_b, net) else text_b)
    if not _block(text_b, net):
        b.write_text(text_b.replace("route:\n", "route:\n" + bad, 1))
    # a router that does not forward, a hop-2 route, a server route through another router
    rtr = sorted(d.glob("rtr*.yaml"))[0]
    rtr.write_text(rtr.read_text().replace("routing:\n    enable: 1\n", ""))
    c = sorted(d.glob("clients-*.yaml"))[5]
    c.write_text(c.read_text().replace("hop: 1\n      priority: 0", "hop: 2\n      priority: 0", 1))
    s = sorted(d.glob("oss*.yaml"))[-1]
    gws = re.findall(r"gateway: (\S+)", s.read_text())
    s.write_text(s.read_text().replace(f"gateway: {gws[-1]}", f"gateway: {off_net}", 1))
    return a.name.split(".")[0], b.name.split(".")[0]


def _seen(r: VerifyResult) -> tuple[object, ...]:
    found = [(d.code, d.file, d.line, d.col, d.path, d.message) for d in r.findings]
    return (found, r.counts, r.ping)


def test_shared_verdicts_give_the_findings_of_unshared_ones(
    demo_nn: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = tmp_path / "t"
    shutil.copytree(demo_nn, t)
    a, b = _mutate(t)
    fast = verify(str(t), ping=True)
    codes = {d.code for d in fast.findings}
    assert {"V-GW-NOT-ON-NET", "V-GW-NOT-ROUTER", "V-HOP"} <= codes, codes
    # the verdict on the same off-net route names each sender
    off_net = [d for d in fast.findings if d.code == "V-GW-NOT-ON-NET" and "its NIs" in d.message]
    for name in (a, b):
        assert any(d.message.startswith(f"{name}: ") and name in d.file for d in off_net), name

    monkeypatch.setattr(Prover, "share_ways", False)
    monkeypatch.setattr(fast_routes, "_MEMO_MAX", 2)  # the memos are cleared all the time
    assert _seen(verify(str(t), ping=True)) == _seen(fast)


ENTRY = "    - net: o2ib{n}\n      gateway: {gw}@gni\n      hop: 1\n      priority: {p}\n"


def _table(text: str) -> object:
    t = fast_routes.route_table(text.encode())
    return None if t is None else (dict(t.routes), t.detailed, t.health, t.shows_state)


@pytest.mark.parametrize("memo_max", [fast_routes._MEMO_MAX, 1])
def test_route_reader_reads_column_by_column_as_entry_by_entry(
    memo_max: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entries are the whole section or nothing; the first of a repeated (net, gateway)
    wins; a gateway shown down is a note; the memos change nothing, even when cleared."""
    monkeypatch.setattr(fast_routes, "_MEMO_MAX", memo_max)
    a, b = ENTRY.format(n=1, gw=10, p=0), ENTRY.format(n=1, gw=11, p=1)
    plain = _table("route:\n" + a + b)
    assert plain == ({("o2ib1", "10@gni"): (1, 0), ("o2ib1", "11@gni"): (1, 1)}, True, (), False)
    # anything between, before or after the entries leaves the section to the generic reader
    for odd in ("# note\n", "    - net: o2ib2\n", "      hop: 1\n", "x: 1\n"):
        assert _table("route:\n" + odd + a + b) is None
        assert _table("route:\n" + a + odd + b) is None
        assert _table("route:\n" + a + b + odd) is None
    # a repeat: the first wins, noted; the down state of the repeat is not the route's
    again = ENTRY.format(n=1, gw=10, p=7) + "      state: down\n"
    got = _table("route:\n" + a + "      state: up\n" + b + again)
    assert got == (
        {("o2ib1", "10@gni"): (1, 0), ("o2ib1", "11@gni"): (1, 1)},
        True,
        ("route to o2ib1 via 10@gni listed twice",),
        True,
    )
    down = _table("route:\n" + a + "      state: Down\n      type: single-hop\n" + b)
    assert down is not None and down[2] == ("gateway 10@gni is down (routes to o2ib1)",)
    # a value the checks refuse, seen before or not, refuses the table every time
    for _ in range(2):
        hop_0 = ENTRY.format(n=1, gw=12, p=0).replace("hop: 1", "hop: 0")
        assert _table("route:\n" + a + hop_0) is None
        assert _table("route:\n" + a.replace("o2ib1", "lo")) is None
        assert _table("route:\n" + a.replace("10@gni", "null")) is None
    assert _table("route:\n" + ENTRY.format(n=0, gw=10, p=0)) == (
        {("o2ib", "10@gni"): (1, 0)},
        True,
        (),
        False,
    )
