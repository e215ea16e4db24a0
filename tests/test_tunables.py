"""LNet tunables: the inventory's ``tunables`` section, written to lnetctl YAML (as ``lnetctl
export`` prints them), modprobe options and the Ansible variables; ``drop_asym_route: 1``
where the plan's symmetry is proven; and the round trip generate -> diff."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from lnetgen import tunables
from lnetgen.api import Generated, diff, generate, write_output
from lnetgen.cli import main
from lnetgen.diff import plan_changes
from lnetgen.inventory import check
from lnetgen.live.cache import ParseCache
from lnetgen.live.lnetctl import parse_yaml

SITES = Path(__file__).resolve().parent.parent / "sites"
DEMO = SITES / "demo.yaml"

TUNABLES = """tunables:
  peer_credits: 16
  credits: 256
  transaction_timeout: 100
  retry_count: 3
  check_routers_before_use: 1
  router_ping_timeout: 30
  tiny_router_buffers: 4096
  roles:
    router: {peer_credits: 32, credits: 1024, small_router_buffers: 32768}

"""


def site_with(tmp_path: Path, block: str = TUNABLES, name: str = "demo.yaml") -> Path:
    text = DEMO.read_text().replace("client_nets:", block + "client_nets:", 1)
    path = tmp_path / name
    path.write_text(text)
    return path


@cache
def tuned() -> Generated:
    import tempfile

    # the site is read whole by generate: its directory need not outlive the call
    with tempfile.TemporaryDirectory(prefix="lnetgen-tunables-") as tmp:
        return generate(str(site_with(Path(tmp))), formats="lnetctl,modprobe,ansible")


def files(gen: Generated) -> dict[str, str]:
    return {f.path: f.content for f in gen.files}


def doc(text: str) -> Any:
    return yaml.safe_load(text)


def test_router_yaml_has_ni_tunables_buffers_and_global_in_export_order() -> None:
    rtr = files(tuned())["lnetctl/rtr01.yaml"]
    d = doc(rtr)
    assert list(d) == ["net", "routing", "buffers", "global"]
    for net in d["net"]:
        assert net["local NI(s)"][0]["tunables"] == {"peer_credits": 32, "credits": 1024}
    assert list(d["net"][0]["local NI(s)"][0]["tunables"]) == ["peer_credits", "credits"]
    assert d["buffers"] == {"tiny": 4096, "small": 32768}  # large not set: not written
    # drop_asym_route first; the timeout before the retry count (each is checked against the
    # current value of the other when imported one at a time)
    assert list(d["global"].items()) == [
        ("drop_asym_route", 1),
        ("transaction_timeout", 100),
        ("retry_count", 3),
    ]


def test_client_and_server_get_their_role_and_no_router_buffers() -> None:
    f = files(tuned())
    client = doc(f["lnetctl/clients-gni.yaml"])
    assert "buffers" not in client
    assert client["net"][0]["local NI(s)"][0]["tunables"] == {"peer_credits": 16, "credits": 256}
    oss = doc(f["lnetctl/oss01.yaml"])
    assert oss["net"][0]["local NI(s)"][0]["tunables"] == {"peer_credits": 16, "credits": 256}


def test_modprobe_carries_the_same_settings() -> None:
    f = files(tuned())
    lines = [ln for ln in f["modprobe/rtr01.conf"].splitlines() if ln.startswith("options")]
    assert lines[0].endswith(
        ' forwarding="enabled" tiny_router_buffers=4096 small_router_buffers=32768 '
        "check_routers_before_use=1 router_ping_timeout=30 lnet_transaction_timeout=100 "
        "lnet_retry_count=3 lnet_drop_asym_route=1"
    )
    assert lines[1:] == [
        "options kgnilnd peer_credits=32 credits=1024",
        "options ko2iblnd peer_credits=32 credits=1024",
    ]
    oss = f["modprobe/oss01.conf"]
    assert (
        "tiny_router_buffers" not in oss and "options ko2iblnd peer_credits=16 credits=256" in oss
    )


def test_only_what_the_inventory_sets_is_written() -> None:
    """The shipped demo sets no tunables: only drop_asym_route, because its plan is
    symmetric."""
    gen = generate(str(DEMO), formats="lnetctl,modprobe")
    f = files(gen)
    for path, text in f.items():
        if path.startswith("lnetctl/"):
            d = doc(text)
            assert d["global"] == {"drop_asym_route": 1}, path
            assert "buffers" not in d, path
            assert all("tunables" not in ni for n in d["net"] for ni in n["local NI(s)"]), path
        elif path.startswith("modprobe/"):
            assert text.count("options ") == 1 and text.rstrip().endswith(
                "lnet_drop_asym_route=1"
            ), path


def test_drop_asym_route_only_where_symmetry_is_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tunables, "symmetric", lambda plan: False)
    from lnetgen.emit import base

    monkeypatch.setattr(base.Context, "symmetric", property(lambda self: False))
    f = files(generate(str(DEMO), formats="lnetctl,modprobe"))
    assert all("drop_asym_route" not in t for t in f.values())


def test_symmetry_check_is_the_plans() -> None:
    gen = generate(str(DEMO), formats="lnetctl")
    assert tunables.symmetric(gen.plan)
    broken = gen.plan.server_routes[0]
    import dataclasses

    plan = dataclasses.replace(
        gen.plan,
        server_routes=(
            dataclasses.replace(broken, routes=broken.routes[:1]),
            *gen.plan.server_routes[1:],
        ),
    )
    assert not tunables.symmetric(plan)


def test_small_transaction_timeout_goes_after_the_retry_count() -> None:
    s = tunables.HostSettings({"transaction_timeout": 2, "retry_count": 1}, ())
    assert list(s.globals()) == ["retry_count", "transaction_timeout"]
    assert [k for k, _ in s.lnet_options()] == ["lnet_retry_count", "lnet_transaction_timeout"]


def test_round_trip_generate_diff_is_equal_then_drift_is_found(tmp_path: Path) -> None:
    site = site_with(tmp_path)
    out = tmp_path / "out"
    write_output(generate(str(site)), str(out))
    for sub in ("", "lnetctl", "modprobe"):
        result = diff(str(site), str(out / sub) if sub else str(out))
        assert result.groups == [], (sub, result.groups[:1])
    # verify reads the same files (tunables included) and proves the routes symmetric, which
    # is what makes drop_asym_route: 1 safe
    from lnetgen.verify import verify

    proof = verify(str(out))
    assert proof.exit_code == 0, proof.errors[:3]
    # the inventory changes: the live files now differ, and the steps say how to fix them
    changed = site_with(tmp_path, TUNABLES.replace("retry_count: 3", "retry_count: 5"), "b.yaml")
    result = diff(str(changed), str(out / "lnetctl"))
    assert {g.diff.tunables for g in result.groups} == {(("retry_count", 3, 5),)}
    steps = plan_changes(result)
    assert steps[-1].title == "set LNet tunables"
    assert {s.commands for s in steps} == {("lnetctl set retry_count 5",)}
    # and a site that sets nothing sees what the live files set that it does not
    result = diff(str(DEMO), str(out / "modprobe"))
    rtr = next(g for g in result.groups if g.diff.role == "router")
    assert ("check_routers_before_use", 1, None) in rtr.diff.tunables
    assert ("o2ib.peer_credits", 32, None) in rtr.diff.tunables


def test_diff_cli_shows_tunable_drift(tmp_path: Path) -> None:
    site = site_with(tmp_path)
    out = tmp_path / "out"
    write_output(generate(str(DEMO)), str(out))
    r = CliRunner().invoke(main, ["diff", str(site), "--live", str(out / "lnetctl")])
    assert r.exit_code == 1, r.output
    assert "~ tunable retry_count: not set -> 3" in r.output
    assert "~ tunable buffers" not in r.output


def test_live_export_reads_global_buffers_and_ni_tunables() -> None:
    text = b"""net:
    - net type: o2ib1
      local NI(s):
        - nid: 10.0.0.1@o2ib1
          status: up
          interfaces:
              0: ib0
          tunables:
              peer_timeout: 180
              peer_credits: 8
              peer_buffer_credits: 0
              credits: 256
routing:
    - enable: 1
buffers:
    tiny: 2048
    small: 16384
    large: 1024
global:
    numa_range: 0
    drop_asym_route: 1
    retry_count: 2
    transaction_timeout: 150
"""
    state = parse_yaml(text, "x.yaml", ParseCache())
    assert state.tunables == {
        "tiny_router_buffers": 2048,
        "small_router_buffers": 16384,
        "large_router_buffers": 1024,
        "drop_asym_route": 1,
        "retry_count": 2,
        "transaction_timeout": 150,
        "o2ib.peer_credits": 8,
        "o2ib.peer_buffer_credits": 0,
        "o2ib.credits": 256,
    }
    assert not state.tunables_explicit  # an export prints defaults too


def test_out_of_range_values_are_located(tmp_path: Path) -> None:
    tmp = tmp_path
    for block, code, where in (
        ("tunables:\n  peer_credits: 300\n\n", "E-SCHEMA", "$.tunables.peer_credits"),
        ("tunables:\n  check_routers_before_use: 2\n\n", "E-SCHEMA", "$.tunables."),
        ("tunables:\n  retry_count: 200\n\n", "E-TUNABLE", "$.tunables.retry_count"),
        ("tunables:\n  peer_credits: 4\n\n", "E-TUNABLE", "$.tunables.peer_credits"),
    ):
        _site, diags = check(str(site_with(tmp, block)))
        hits = [d for d in diags if d.code == code and d.path.startswith(where)]
        assert hits and hits[0].line > 0, (block, [d.format() for d in diags])


def test_every_tunable_has_its_kernel_source() -> None:
    for t in tunables.TUNABLES:
        assert t.default and t.source.split()[0].startswith(("lnet/", "include/")), t.name
    assert tunables.SOURCE_VERSION.startswith("lustre-release 2.17.57")


def test_stackhpc_contract_renders_the_tunables() -> None:
    """The role's template (its contract, see test_ansible_contract) prints our per-NI
    tunables, buffers and globals exactly as lnetgen's own lnetctl YAML has them."""
    from test_ansible_contract import check_hosts

    assert check_hosts(tuned()) > 0


def test_own_role_reproduces_tunables_byte_for_byte() -> None:
    from test_ansible import host_sources, role_render, vars_for

    gen = tuned()
    f = files(gen)
    by_host = vars_for(gen)
    for fmt, template in (("lnetctl", "lnet.conf.j2"), ("modprobe", "modprobe.conf.j2")):
        for host in ("rtr01", "oss01", "nid00001"):
            path = host_sources(gen, fmt)[host]
            assert role_render(gen, template, by_host[host]) == f[path], (host, path)


# ------------------------------------------------------------------- the kfi LND's own limits

DFLY = Path(__file__).resolve().parent / "cases" / "valid" / "dragonfly" / "site.yaml"


def dfly_with(tmp_path: Path, block: str) -> Path:
    text = DFLY.read_text().replace("filesystems:", block + "filesystems:", 1)
    path = tmp_path / "kfi.yaml"
    path.write_text(text)
    return path


def test_kfi_credits_above_the_lnd_limit_are_refused_where_written(tmp_path: Path) -> None:
    """kfilnd refuses credits above 65,535 (KFILND_EP_KEY_MAX): it was written to modprobe
    and lnetctl YAML and the routers' kfi NI did not start.  Only roles with a kfi NI."""
    block = "tunables:\n  roles:\n    router: {credits: 100000}\n    server: {credits: 100000}\n"
    _site, diags = check(str(dfly_with(tmp_path, block)))
    bad = [d for d in diags if d.code == "E-TUNABLE"]
    assert [(d.path, d.line) for d in bad] == [("$.tunables.roles.router.credits", 37)], [
        d.format() for d in diags
    ]
    assert "65,535" in bad[0].message and "kfi" in bad[0].message
    ok = "tunables:\n  roles:\n    router: {credits: 65535}\n"
    _site, diags = check(str(dfly_with(tmp_path, ok)))
    assert not [d for d in diags if d.severity == "error"], [d.format() for d in diags]


def test_credit_hints_quote_the_site_lnds_defaults(tmp_path: Path) -> None:
    """A kfi site's peer_credits hint quoted o2ib/tcp/gni defaults; it names kfilnd's (16
    peer credits, 512 credits) and the storage side's o2ib, and no LND the site lacks."""
    _site, diags = check(str(dfly_with(tmp_path, "tunables: {peer_credits: 300, credits: 0}\n")))
    hints = {d.path: d.hint for d in diags if d.code == "E-SCHEMA"}
    assert hints["$.tunables.peer_credits"].startswith("kernel default 16 (kfi), 8 (o2ib) ")
    assert hints["$.tunables.credits"].startswith("kernel default 512 (kfi), 256 (o2ib) ")
    assert all("gni" not in h and "tcp" not in h for h in hints.values()), hints


def test_a_kfi_nis_default_credits_are_no_difference() -> None:
    assert tunables.KERNEL_DEFAULTS["kfi.peer_credits"] == 16
    assert tunables.KERNEL_DEFAULTS["kfi.credits"] == 512


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1.5"])
def test_a_value_that_is_no_whole_number_is_one_error(tmp_path: Path, value: str) -> None:
    """``credits: .inf`` gave E-SCHEMA ("inf is outside 1-2147483647") and E-SCHEMA-TYPE for
    the one value, with two different kernel-default hints."""
    demo = Path(__file__).resolve().parent.parent / "sites" / "demo.yaml"
    site = tmp_path / "site.yaml"
    text = demo.read_text(encoding="utf-8")
    site.write_text(
        text.replace("client_nets:", f"tunables:\n  credits: {value}\n\nclient_nets:", 1)
    )
    r = CliRunner().invoke(main, ["validate", str(site)])
    assert r.exit_code == 1, r.output
    lines = [ln for ln in r.output.splitlines() if "$.tunables.credits" in ln]
    assert len(lines) == 1 and "error[E-SCHEMA-TYPE]" in lines[0], lines
    # the kernel defaults of the LNDs the demo runs (gni, o2ib), as the range error gives them
    assert "kernel default 256 or 64 (gni), 256 (o2ib)" in lines[0], lines
