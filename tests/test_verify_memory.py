"""``verify`` keeps which client NID a client was proved to reach per client and kind of server
(the nets of its client NIDs), only where it is not the first, not per (client, server) pair:
the ping plan is the one a plain per-pair map gives, on a tree where some clients reach only
the second client NID of servers, and the stored map stays far below clients x servers."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lnetgen import nodes
from lnetgen.verify import proof, verify
from lnetgen.verify.manifest import Manifest, Server
from lnetgen.verify.pairs import FsProof
from lnetgen.verify.reach import DIRECT, HOLD, Prover, net_of
from lnetgen.verify.world import Endpoint

NI_O2IB = "    - net type: o2ib\n      local NI(s):\n        - interfaces:\n              0: ib0\n"


Seen = dict[str, Any]


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """What the next ``verify`` proved with: its prover, proofs and scope."""
    got: Seen = {}
    real_plan = proof.ping_plan

    class Kept(Prover):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            got["prover"] = self

    def plan(m: Manifest, proofs: list[FsProof], in_scope: Callable[[Endpoint], bool]) -> Any:
        got.update(proofs=proofs, in_scope=in_scope)
        return real_plan(m, proofs, in_scope)

    monkeypatch.setattr(proof, "Prover", Kept)
    monkeypatch.setattr(proof, "ping_plan", plan)
    return got


def _mutate(t: Path) -> str:
    """Servers with two client NIDs on different nets: scratch's first on the server net
    (o2ib), which only three client classes reach (an NI on it), home's second on o2ib, which
    the first of them uses because its best route to the home OSS net is broken (only a
    backup route works).  The name of that first client class."""
    mpath = t / "manifest.json"
    doc = json.loads(mpath.read_text())
    for s in doc["filesystems"]["scratch"]["servers"]:
        s["client_nids"] = [s["nids"][1], s["nids"][0]]
    for s in doc["filesystems"]["home"]["servers"]:
        s["client_nids"] = [s["nids"][0], s["nids"][1]]
    mpath.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    files = sorted((t / "lnetctl").glob("clients-*.yaml"))
    for f in files[:3]:
        f.write_text(f.read_text().replace("route:\n", NI_O2IB + "route:\n", 1))
    first = files[0]
    text = first.read_text()
    best = re.search(
        r"    - net: o2ib200\n      gateway: (\S+)\n      hop: 1\n      priority: 0\n", text
    )
    assert best, first
    first.write_text(text.replace(best.group(0), best.group(0).replace(best.group(1), "999@gni")))
    return first.stem


def _plain_nid(prover: Prover, c: Endpoint, s: Server) -> str | None:
    """The rule, per pair: the first client NID reached at the best priority, else the first
    reached at all; None when none is (the plan then pings the first)."""
    reached = [(nid, prover.reach(c, net_of(nid))) for nid in s.client_nids]
    best = [nid for nid, r in reached if r.status in (DIRECT, HOLD)]
    return (best or [nid for nid, r in reached if r.ok] or [None])[0]


def _plain_client_lines(got: Seen) -> list[list[str]]:
    """Each file system's client lines as the plan built them from a per-pair map."""
    prover, in_scope = got["prover"], got["in_scope"]
    out = []
    for p in got["proofs"]:
        client_nid = {}
        for c in p.clients:
            for s, _ep in p.servers:
                nid = _plain_nid(prover, c, s)
                if nid is not None:
                    client_nid[(c.name, s.name)] = nid
        clients: dict[str, set[str]] = {}
        for c in p.clients:
            if not in_scope(c):
                continue
            for s, _ep in p.servers:
                nid = client_nid.get((c.name, s.name), s.client_nids[0])
                clients.setdefault(nid, set()).add(c.first_host)
            for nid in p.fs.mgs_nids:
                clients.setdefault(nid, set()).add(c.first_host)
        by_nid = sorted(clients, key=lambda n: nodes.parse_nid(n).sort_key())
        out.append([f"clush -w {nodes.fold(sorted(clients[n]))} lnetctl ping {n}" for n in by_nid])
    return out


def _client_lines(ping: list[str], fs: str) -> list[str]:
    head = f"# {fs}: clients (first member of each class) -> servers"
    if head not in ping:
        return []
    lines = ping[ping.index(head) + 1 :]
    return lines[: next((i for i, ln in enumerate(lines) if ln.startswith("#")), len(lines))]


@pytest.mark.parametrize(
    ("scope", "codes"),
    [
        (None, {"V-CLIENT-NID", "V-GW-UNKNOWN"}),
        ("oss11", {"V-CLIENT-NID"}),
        ("the first class", {"V-GW-UNKNOWN"}),
    ],
)
def test_ping_plan_is_the_per_pair_one(
    scope: str | None, codes: set[str], demo_nn: Path, tmp_path: Path, seen: Seen
) -> None:
    t = tmp_path / "t"
    shutil.copytree(demo_nn, t)
    first = _mutate(t)
    hosts = scope
    if scope == "the first class":
        hosts = re.findall(r"\(client: ([^)]+)\)", (t / f"lnetctl/{first}.yaml").read_text())[0]
    res = verify(str(t), hosts=hosts, ping=True)
    assert {d.code for d in res.findings} == codes
    plain = _plain_client_lines(seen)
    assert [_client_lines(res.ping, p.fs.name) for p in seen["proofs"]] == plain
    if scope != "oss11":  # the first class pings home's second NID
        c = next(c for c in seen["proofs"][0].clients if c.name == first)
        assert f"clush -w {c.first_host} lnetctl ping 10.10.1.11@o2ib" in plain[0]
    if scope is None:  # scratch: three classes ping the first NID, the others the second
        pinged = {ln.rsplit(" ", 1)[1] for ln in plain[1]}
        assert {"10.10.1.1@o2ib", "10.10.1.1@o2ib100"} <= pinged


def test_stored_picks_stay_far_below_clients_x_servers(
    demo_nn: Path, tmp_path: Path, seen: Seen
) -> None:
    verify(str(demo_nn), ping=True)  # a sound tree: every client uses the first client NID
    assert all(not p.client_pick for p in seen["proofs"])
    t = tmp_path / "t"
    shutil.copytree(demo_nn, t)
    _mutate(t)
    verify(str(t), ping=True)
    for p in seen["proofs"]:
        assert p.client_pick  # every file system has clients using a second NID
        assert len(p.client_pick) <= len(p.clients) * len(p.nid_kinds)
        assert len(p.client_pick) * 2 < len(p.clients) * len(p.servers)
