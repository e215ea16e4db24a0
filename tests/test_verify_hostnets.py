"""``verify`` proves a pair by the destination's host, not only by its net: a NID counts only when
a route leads to its net *and* the host owning it has an NI there.  A server whose file lost the
NI of one of its NIDs is unreachable at that NID, however good the routes to the net are."""

from __future__ import annotations

import re
from pathlib import Path

from verify_tree import SERVER_NET

from lnetgen.live import HostState
from lnetgen.verify import VerifyResult, verify
from lnetgen.verify.world import Endpoint

MGS = "mds01"  # the MGS of scratch in the demo site
MGS_CLIENT_NID = "10.10.2.1@o2ib103"


def drop_net_entry(path: Path, net: str) -> None:
    text = path.read_text()
    new, n = re.subn(rf"    - net type: {net}\n(?:      [^\n]*\n)+", "", text, count=1)
    assert n, net
    path.write_text(new)


def messages(res: VerifyResult, code: str) -> list[str]:
    return [f"{d.file}: {d.message}" for d in res.findings if d.code == code]


def test_mgs_without_the_server_net_is_unreachable_from_the_servers(tree: Path) -> None:
    """The MGS lost its NI on the shared server net: its server-net NID answers nothing, and
    the servers have no route to its client net, so no OST can register.  Every server's pair
    towards it fails, naming the NID not tried; the counts say so (was: only the MGS's own
    pairs failed)."""
    drop_net_entry(tree / f"lnetctl/{MGS}.yaml", SERVER_NET)
    res = verify(str(tree))
    scratch = res.counts["scratch"]["server->server"]
    # the MGS reaches none of the 9 OSS, and none of them reaches it
    assert (scratch.pairs, scratch.fail) == (90, 18)
    [oss01] = [m for m in messages(res, "V-NO-ROUTE") if m.startswith(str(tree / "lnetctl/oss01"))]
    assert f"oss01 cannot reach {MGS}" in oss01
    assert f"10.10.2.1@{SERVER_NET} ({MGS} has no NI on {SERVER_NET})" in oss01
    scoped = verify(str(tree), hosts="oss01")
    assert scoped.counts["scratch"]["server->server"].fail == 2  # both ways


def test_mgs_without_its_client_net_is_unreachable_from_the_clients(tree: Path) -> None:
    """The MGS lost the NI of its client (and mount) NID: the clients have routes to that net,
    but nothing answers there.  The client-class pair fails, reported at the MGS's file with
    the NID tried, and the mount NID is unreachable (was: every client pair held)."""
    drop_net_entry(tree / f"lnetctl/{MGS}.yaml", "o2ib103")
    res = verify(str(tree))
    assert res.exit_code == 1
    assert res.counts["scratch"]["client-class->server"].fail == 1
    mgs_file = str(tree / f"lnetctl/{MGS}.yaml")
    pair = [m for m in messages(res, "V-NID-NO-NI") if "cannot reach" in m]
    assert pair == [
        f"{mgs_file}: client-class->server: clients-gni cannot reach {MGS}: {MGS} has no NI on "
        f"the net of any NID they may use ({MGS_CLIENT_NID})"
    ]
    [mount] = [d for d in res.findings if d.code == "V-MOUNT-UNREACHABLE"]
    assert MGS_CLIENT_NID in mount.message and f"{MGS} has no NI on o2ib103" in mount.message
    assert mount.file.endswith("manifest.json") and mount.line > 0


def test_nids_are_kept_when_the_state_does_not_show_nis() -> None:
    """A dump without its ``net:`` part says nothing against a NID: every one is tried."""
    from lnetgen.verify.reach import owned

    ep = Endpoint("oss01", "server", "oss01", "x", HostState())
    nids = ("10.0.0.1@o2ib1", "10.0.0.1@o2ib")
    assert owned(ep, nids) == (nids, ())
