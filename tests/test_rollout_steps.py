"""Change steps an administrator runs on a live file system, as a reviewer who upgraded a
deployed site read them:

1. a server whose NID changes was to have "the targets unmounted" and ``lctl replace_nids``
   run on the MGS; the MGS refuses that (EBUSY) while any other target runs or a client is
   connected (lustre/mgs/mgs_llog.c ``mgs_replace_nids()`` -> ``only_mgs_is_running()``): the
   step now says to stop the whole file system and mount the MGS alone with ``-o nosvc``;
2. the router reload waves held no command to run (``"clush": []``): each now drains its
   routers with a line to paste and says how to reload them.
"""

from __future__ import annotations

from pathlib import Path

from test_reload_waves import credit_change

from lnetgen.diff import SERVER, DiffResult, Group, HostDiff, plan_changes


def test_a_server_nid_change_stops_the_whole_file_system() -> None:
    moved = HostDiff(SERVER, nids=(("o2ib100", ("10.10.1.1@o2ib100",), "10.10.1.9@o2ib100"),))
    left = HostDiff(SERVER, add_nets=(("o2ib3", ("ib0",)),), remove_nets=(("o2ib4", ("ib0",)),))
    for d in (moved, left):
        steps = plan_changes(DiffResult("s", "x", "p", groups=[Group("oss01", 1, d)]))
        (step,) = [s for s in steps if s.outage]
        assert "stop the whole file system first" in step.outage, step.outage
        assert "unmount every client, then every MDT and OST" in step.outage
        assert "-o nosvc" in step.outage and "lctl replace_nids" in step.outage
        assert "unmount the targets and" not in step.outage  # the instruction the MGS refuses


def test_every_reload_wave_drains_its_routers_with_a_line_to_paste(tmp_path: Path) -> None:
    _after, _tree, steps = credit_change(tmp_path)
    waves = [s for s in steps if "wave" in (s["outage"] or "")]
    assert len(waves) == 2
    for s in waves:
        assert s["clush"] == [f"clush -w '{s['hosts']}' 'lnetctl set routing 0'"], s["clush"]
        assert not s["live"]
        assert any("systemctl restart lnet" in c for c in s["commands"]), s["commands"]


def test_a_drain_keeps_half_of_a_net_s_primaries() -> None:
    """Routers that only lose routes were drained as long as any gateway stayed: on the
    reviewer's upgraded site all four primaries of o2ib2 were drained for the whole change,
    its traffic on two backups.  Now at most half of a net's primaries go (as the reload
    waves), and a readdressed router is still drained whenever a gateway stays."""
    from lnetgen.diff.paths import drain_plan
    from lnetgen.diff.result import CLIENT, Paths, Peer

    hops = {("o2ib2", f"rtr{i}", f"{i}@gni") for i in range(1, 7)}
    best = frozenset(h for h in hops if h[1] in {"rtr1", "rtr2", "rtr3", "rtr4"})
    nets = frozenset({"gni", "o2ib2"})
    paths = Paths(
        (Peer(CLIENT, 8, frozenset(hops), frozenset(hops), best),),
        {f"rtr{i}": nets for i in range(1, 7)},
    )
    four = ["rtr1", "rtr2", "rtr3", "rtr4"]
    assert drain_plan(paths, four, frozenset(), frozenset()).drained == {"rtr1", "rtr2"}
    readdressed = frozenset(four)
    assert drain_plan(paths, four, readdressed, frozenset()).drained == set(four)


def test_a_route_to_a_net_servers_leave_through_a_new_router_address_is_added() -> None:
    """A client's new route to a net some server leaves, through a router's new address:
    kept out of the early adds (the net's servers move) and out of the moving adds (the
    address is not there yet), it must still come with the adds through new addresses."""
    from lnetgen.diff import CLIENT, ROUTER

    rtr = HostDiff(ROUTER, nids=(("gni", ("5@gni",), "55@gni"),))
    oss = HostDiff(SERVER, remove_nets=(("o2ib4", ("ib0",)),), add_nets=(("o2ib3", ("ib0",)),))
    cli = HostDiff(CLIENT, add_routes=(("o2ib4", "55@gni", 1, 0),))
    groups = [Group("rtr05", 1, rtr), Group("oss07", 1, oss), Group("nid01", 1, cli)]
    steps = plan_changes(DiffResult("s", "x", "p", groups=groups))
    adds = [s for s in steps for c in s.commands if c.startswith("lnetctl route add --net o2ib4")]
    assert [s.hosts for s in adds] == ["nid01"], [(s.title, s.commands) for s in steps]
