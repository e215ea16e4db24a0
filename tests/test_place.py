"""Placement on the demo site: nearest clients per OSS (seed 000 §5), nearest OSTs for a client
(seed 004), and the link loads placement saves.

Demo geometry used below: 4x4x4 torus, xyz routing; nid00001 sits on chip (0,0,0), the chip
of rtr01.  Projection pairs oss01 with rtr01 (0,0,0) + rtr04 (2,2,0), oss02 with rtr02
(2,0,0), oss03 with rtr03 (0,2,0), oss10 with rtr13 (1,1,3) + rtr16 (3,3,3), oss11 with rtr14
(3,1,3), oss12 with rtr15 (1,3,3).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import topology
from lnetgen.analyze import index_plan
from lnetgen.cli.analyze import place_group
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site
from lnetgen.model import Site
from lnetgen.place import (
    clients_by_name,
    compare_placements,
    default_clients,
    net_hops,
    oss_with_osts,
    place_clients,
    place_osts,
    random_clients,
    workload,
)
from lnetgen.plan import Plan
from lnetgen.solve import solve

DEMO = str(Path(__file__).resolve().parent.parent / "sites" / "demo.yaml")


@cache
def site() -> Site:
    return load_site(DEMO)[0]


@cache
def plan(strategy: str) -> Plan:
    return solve(site(), strategy)


def hops_to(router: str) -> npt.NDArray[np.int64]:
    s = site()
    assert s.torus is not None
    rc = np.asarray([s.router(router).coords])
    return topology.torus_hops(s.clients.coords, rc, s.torus.dims)[:, 0]


# ---------------------------------------------------------------------------- OSTs for a client


def test_nearest_osts_by_hand() -> None:
    """nid00001 on (0,0,0): oss01 is 0 hops from rtr01 and 4 from rtr04, mean 2; oss02 and
    oss03 are 2 hops away (rtr02, rtr03); every other OSS is 3 or more.  Equal distances are
    dealt one OST per OSS first: OST 0 (oss01), 4 (oss02), 8 (oss03), then OST 1."""
    picks = place_osts(site(), plan("projection"), "nid00001", count=4, fs="scratch")
    assert [(p.fs, p.index, p.server, p.hops) for p in picks] == [
        ("scratch", 0, "oss01", 2.0),
        ("scratch", 4, "oss02", 2.0),
        ("scratch", 8, "oss03", 2.0),
        ("scratch", 1, "oss01", 2.0),
    ]
    assert picks[0].routers == ("rtr01", "rtr04")
    assert picks[1].setstripe("/lus/scratch/out") == "lfs setstripe -c 1 -i 4 /lus/scratch/out"


def test_nearest_osts_of_one_file_system() -> None:
    """home: oss10 (rtr13 and rtr16, 3 hops each), oss11 (rtr14, 3), oss12 (rtr15, 3)."""
    picks = place_osts(site(), plan("projection"), "nid00001", count=3, fs="home")
    assert [(p.index, p.server, p.hops) for p in picks] == [
        (0, "oss10", 3.0),
        (4, "oss11", 3.0),
        (8, "oss12", 3.0),
    ]


def test_osts_follow_the_clients_own_router_in_round_robin() -> None:
    """Round-robin: the distance counts the one router the client uses for the set."""
    p = plan("round-robin")
    c = site().clients.names.index("nid00001")
    picks = place_osts(site(), p, "nid00001", count=12, fs="scratch")
    for pk in picks:
        assert len(pk.routers) == 1
        assert pk.hops == hops_to(pk.routers[0])[c]


def test_place_osts_errors() -> None:
    with pytest.raises(InputError, match="nosuch"):
        place_osts(site(), plan("projection"), "nosuch")
    with pytest.raises(InputError, match="file system"):
        place_osts(site(), plan("projection"), "nid00001", fs="nope")
    with pytest.raises(InputError):
        place_osts(site(), plan("projection"), "nid00001", count=0, fs="home")


def test_place_osts_never_mixes_file_systems_nor_invents_osts() -> None:
    """OST indices are per file system: without --fs on the two-file-system demo the nearest
    OSTs would mix scratch's OST 0 with home's OST 0.  A count above what exists is refused."""
    with pytest.raises(InputError, match=r"2 file systems with OSTs \(home, scratch\)"):
        place_osts(site(), plan("projection"), "nid00001", count=2)
    with pytest.raises(InputError, match="13: nid00001 reaches only 12 OST") as exc:
        place_osts(site(), plan("projection"), "nid00001", count=13, fs="home")
    assert exc.value.diagnostics[0].path == "--count"
    assert len(place_osts(site(), plan("projection"), "nid00001", count=12, fs="home")) == 12


# ---------------------------------------------------------------------------- clients for an OSS


def test_greedy_nearest_clients_per_oss() -> None:
    """Seed 000 §5: the first OSS takes the nearest clients to its router; the second OSS the
    nearest of those left."""
    s = site()
    res = place_clients(s, plan("projection"), ["oss02", "oss05"], per_oss=10)
    first, second = res.per_oss
    assert first.routers == ("rtr02",) and second.routers == ("rtr06",)
    d2 = hops_to("rtr02")
    chosen = np.asarray(first.clients)
    rest = np.setdiff1d(np.arange(len(s.clients)), chosen)
    assert d2[chosen].max() <= d2[rest].min()
    assert first.mean_hops == pytest.approx(d2[chosen].mean())
    d6 = hops_to("rtr06")
    free = np.setdiff1d(rest, np.asarray(second.clients))
    assert not set(first.clients) & set(second.clients)
    assert d6[np.asarray(second.clients)].max() <= d6[free].min()
    # ties go to the lower client index
    at_max = np.nonzero(d2 == d2[chosen].max())[0]
    taken = sorted(set(at_max.tolist()) & set(chosen.tolist()))
    assert taken == at_max[: len(taken)].tolist()
    assert first.nodes.startswith("nid")


def test_two_routers_count_as_their_mean() -> None:
    """oss01 is reached through rtr01 and rtr04 (LNet alternates): a client's distance is the
    mean of its hops to both."""
    ix = index_plan(site(), plan("projection"))
    k = ix.nets.index(next(s.net for s in plan("projection").servers if s.name == "oss01"))
    expect = (hops_to("rtr01") + hops_to("rtr04")) / 2
    assert np.allclose(net_hops(ix)[:, k], expect)


def test_available_clients_only() -> None:
    s = site()
    pool = clients_by_name(s, "nid[00050-00096]")
    res = place_clients(s, plan("projection"), ["oss02"], per_oss=5, available=pool)
    assert all(c >= 49 for c in res.per_oss[0].clients)
    with pytest.raises(InputError, match="free clients"):
        place_clients(s, plan("projection"), ["oss02"], per_oss=48, available=pool)
    with pytest.raises(InputError):
        clients_by_name(s, "nid[00001-00200]")


def test_place_clients_errors() -> None:
    with pytest.raises(InputError, match="nosuch"):
        place_clients(site(), plan("projection"), ["nosuch"], 2)
    with pytest.raises(InputError, match="twice"):
        place_clients(site(), plan("projection"), ["oss01", "oss01"], 2)
    with pytest.raises(InputError):
        place_clients(site(), plan("projection"), ["oss01"], 0)
    with pytest.raises(InputError, match="free"):
        default_clients(site(), plan("projection"), oss_with_osts(site(), plan("projection")), 9)


def test_place_clients_refuses_a_server_that_is_no_oss_by_name() -> None:
    """``--oss mds01`` said "give --per-oss: some OSS have no OSTs listed": an MDS is named as
    one, at ``--oss``, exit 2; an OSS without OSTs is named when ``--per-oss`` is missing."""
    for per in (None, 2):
        with pytest.raises(InputError) as exc:
            place_clients(site(), plan("projection"), ["oss01", "mds01"], per)
        (d,) = exc.value.diagnostics
        assert d.code == "E-ANALYZE-SERVER" and "mds01 is an MDS, not an OSS" in d.message
    with pytest.raises(InputError, match=r"mds\[01-02\] are MDS, not OSS"):
        compare_placements(site(), plan("projection"), ["mds02", "mds01"], 2)
    res = CliRunner().invoke(place_group, ["clients", DEMO, "--oss", "mds01"])
    assert res.exit_code == 2, res.output
    assert "error[E-ANALYZE-SERVER] --oss: mds01 is an MDS, not an OSS" in res.output
    assert "some OSS" not in res.output


def test_place_clients_names_the_oss_without_osts(tmp_path: Path) -> None:
    text = Path(DEMO).read_text(encoding="utf-8")
    bare = tmp_path / "site.yaml"
    assert text.count('osts: "0-3"') == 2  # oss01 (scratch) first, oss10 (home)
    bare.write_text(text.replace('    osts: "0-3"\n', "", 1), encoding="utf-8")
    s = load_site(str(bare))[0]
    assert not s.server("oss01").osts
    with pytest.raises(InputError, match="give --per-oss: oss01 list"):
        place_clients(s, solve(s, "projection"), ["oss01", "oss02"], None)


def test_workload_flows() -> None:
    """Up to one client per OST each carries a whole OST (one flow); more clients share the
    OSS's OSTs."""
    s = site()
    p = plan("projection")
    w = workload(s, place_clients(s, p, ["oss01"], per_oss=3))
    assert w.flows.tolist() == [1.0, 1.0, 1.0]
    w = workload(s, place_clients(s, p, ["oss01"], per_oss=8))
    assert w.flows.sum() == pytest.approx(4.0)
    assert set(w.servers) == {"oss01"}


@given(
    oss=st.lists(
        st.sampled_from([f"oss{i:02d}" for i in range(1, 13)]), min_size=1, max_size=6, unique=True
    ),
    per=st.integers(min_value=1, max_value=8),
    strategy=st.sampled_from(["projection", "round-robin", "groups", "baseline"]),
)
def test_greedy_placement_properties(oss: list[str], per: int, strategy: str) -> None:
    """Disjoint sets of the asked size; each OSS's picks are no farther than any client still
    free when its turn came."""
    s = site()
    p = plan(strategy)
    ix = index_plan(s, p)
    res = place_clients(s, p, oss, per, index=ix)
    d = net_hops(ix)
    free = np.ones(len(s.clients), dtype=bool)
    for o in res.per_oss:
        chosen = np.asarray(o.clients)
        assert len(chosen) == per and free[chosen].all()
        k = int(ix.server_net[ix.server_id(o.server)])
        free[chosen] = False
        if free.any():
            assert d[chosen, k].max() <= d[free, k].min()


# ---------------------------------------------------------------------------- loads


@pytest.mark.parametrize("strategy", ["projection", "round-robin", "nearest-neighbor"])
def test_placement_lowers_the_busiest_link(strategy: str) -> None:
    """One client per OST for all 12 OSS (48 clients): placed clients load the busiest torus
    link less than the job launcher's node order or a random choice, and move fewer
    flow-hops."""
    s = site()
    p = plan(strategy)
    cmp = compare_placements(s, p, oss_with_osts(s, p), None)
    assert cmp.placed.writes.max < cmp.default.writes.max
    assert cmp.placed.writes.max < cmp.random.writes.max
    assert cmp.placed.writes.volume < cmp.default.writes.volume
    assert cmp.placed.writes.volume < cmp.random.writes.volume
    assert cmp.placed.mean_hops < cmp.default.mean_hops
    assert sum(len(o.clients) for o in place_clients(s, p, oss_with_osts(s, p), None).per_oss) == 48


def test_random_is_seeded() -> None:
    s = site()
    p = plan("projection")
    a = random_clients(s, p, ["oss01", "oss02"], 4, seed=7)
    b = random_clients(s, p, ["oss01", "oss02"], 4, seed=7)
    assert a == b


# ---------------------------------------------------------------------------- CLI


def test_cli_place_clients() -> None:
    runner = CliRunner()
    res = runner.invoke(
        place_group,
        ["clients", DEMO, "--oss", "oss02", "--oss", "oss05", "--per-oss", "4", "-s", "projection"],
    )
    assert res.exit_code == 0, res.output
    assert "oss02  via rtr02  4 clients" in res.output
    assert "placed" in res.output and "default" in res.output and "random" in res.output
    res = runner.invoke(
        place_group, ["clients", DEMO, "--oss", "oss02", "-s", "projection", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert len(doc["placement"]["per_oss"][0]["clients"]) == 4  # one per OST
    res = runner.invoke(place_group, ["clients", DEMO, "--oss", "nosuch"])
    assert res.exit_code == 2


def test_cli_place_osts() -> None:
    runner = CliRunner()
    res = runner.invoke(
        place_group,
        [
            "osts",
            DEMO,
            "--client",
            "nid00001",
            "--count",
            "2",
            "-s",
            "projection",
            "--fs",
            "scratch",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "lfs setstripe -c 1 -i 0 FILE.0  # OST 0 on oss01 via rtr01,rtr04, 2.0 hops",
        "lfs setstripe -c 1 -i 4 FILE.1  # OST 4 on oss02 via rtr02, 2.0 hops",
    ]
    res = runner.invoke(place_group, ["osts", DEMO, "--client", "nid99999"])
    assert res.exit_code == 2
