"""LNet health settings in the inventory's ``tunables`` (a reviewer could not set
``health_sensitivity``: E-SCHEMA-KEY): written to lnetctl YAML ``global:`` and ``options lnet``,
refused where the kernel would refuse them, read back from a dump and set live by diff."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_tunables import site_with

from lnetgen import tunables
from lnetgen.api import diff, generate, write_output
from lnetgen.diff import plan_changes
from lnetgen.inventory import check
from lnetgen.live.cache import ParseCache
from lnetgen.live.lnetctl import parse_yaml

HEALTH = """tunables:
  health_sensitivity: 50
  response_tracking: 2
  recovery_limit: 600
  max_recovery_ping_interval: 300
  retry_count: 3

"""


def test_health_settings_are_written_in_both_formats(tmp_path: Path) -> None:
    site = site_with(tmp_path, HEALTH)
    _site, diags = check(str(site))
    assert not [d for d in diags if d.severity == "error"], [d.format() for d in diags]
    f = {g.path: g.content for g in generate(str(site), formats="lnetctl,modprobe").files}
    glob = yaml.safe_load(f["lnetctl/rtr01.yaml"])["global"]
    # the sensitivity before the retry count: the kernel refuses retries while health is off
    assert list(glob.items()) == [
        ("drop_asym_route", 1),
        ("health_sensitivity", 50),
        ("retry_count", 3),
        ("response_tracking", 2),
        ("recovery_limit", 600),
        ("max_recovery_ping_interval", 300),
    ]
    line = next(ln for ln in f["modprobe/oss01.conf"].splitlines() if ln.startswith("options"))
    assert line.endswith(
        " lnet_health_sensitivity=50 lnet_retry_count=3 lnet_drop_asym_route=1 "
        "lnet_response_tracking=2 lnet_recovery_limit=600 lnet_max_recovery_ping_interval=300"
    ), line


def test_values_the_kernel_refuses_are_located(tmp_path: Path) -> None:
    for block, where in (
        ("tunables:\n  health_sensitivity: 1001\n\n", "$.tunables.health_sensitivity"),
        ("tunables:\n  response_tracking: 4\n\n", "$.tunables.response_tracking"),
        ("tunables:\n  max_recovery_ping_interval: 0\n\n", "$.tunables.max_recovery_ping_interval"),
        ("tunables:\n  recovery_limit: -1\n\n", "$.tunables.recovery_limit"),
    ):
        _site, diags = check(str(site_with(tmp_path, block)))
        hits = [d for d in diags if d.code == "E-SCHEMA" and d.path == where]
        assert hits and hits[0].line > 0, (block, [d.format() for d in diags])
    # the deprecated no-ops stay unknown keys
    _site, diags = check(str(site_with(tmp_path, "tunables:\n  recovery_interval: 1\n\n")))
    assert any(d.code == "E-SCHEMA-KEY" for d in diags), [d.format() for d in diags]


def test_retries_with_health_off_are_refused(tmp_path: Path) -> None:
    """api-ni.c retry_count_set(): "Can not set lnet_retry_count when health feature is turned
    off" -- here a client override turns health off under a site-wide retry count."""
    block = "tunables:\n  retry_count: 3\n  roles:\n    client: {health_sensitivity: 0}\n\n"
    _site, diags = check(str(site_with(tmp_path, block)))
    bad = [d for d in diags if d.code == "E-TUNABLE"]
    assert [d.path for d in bad] == ["$.tunables.retry_count"], [d.format() for d in diags]
    assert "client" in bad[0].message and "health_sensitivity 0" in bad[0].message
    # health off without a retry count: the kernel zeroes it, and the files say so
    ok = "tunables:\n  health_sensitivity: 0\n  transaction_timeout: 1\n\n"
    _site, diags = check(str(site_with(tmp_path, ok)))
    assert not [d for d in diags if d.severity == "error"], [d.format() for d in diags]
    s = tunables.HostSettings({"health_sensitivity": 0, "retry_count": 0}, ())
    assert list(s.globals()) == ["health_sensitivity", "retry_count"]
    f = {g.path: g.content for g in generate(str(site_with(tmp_path, ok))).files}
    assert list(yaml.safe_load(f["lnetctl/oss01.yaml"])["global"].items()) == [
        ("drop_asym_route", 1),
        ("health_sensitivity", 0),
        ("retry_count", 0),
        ("transaction_timeout", 1),
    ]


def test_a_dumps_health_settings_are_read_back_and_diffed(tmp_path: Path) -> None:
    text = b"""global:
    numa_range: 0
    drop_asym_route: 0
    retry_count: 2
    transaction_timeout: 150
    health_sensitivity: 100
    recovery_interval: 1
    router_sensitivity: 100
    lnd_timeout: 49
    response_tracking: 3
    recovery_limit: 0
    max_recovery_ping_interval: 900
"""
    state = parse_yaml(text, "x.yaml", ParseCache())
    assert state.tunables is not None
    assert {k: state.tunables[k] for k in ("health_sensitivity", "max_recovery_ping_interval")} == {
        "health_sensitivity": 100,
        "max_recovery_ping_interval": 900,
    }
    # the kernel's defaults a full export prints are no difference
    assert all(tunables.KERNEL_DEFAULTS[k] == v for k, v in state.tunables.items())
    # generate, then change the inventory: the steps set the new values live
    out = tmp_path / "out"
    write_output(generate(str(site_with(tmp_path, HEALTH))), str(out))
    assert diff(str(site_with(tmp_path, HEALTH)), str(out / "lnetctl")).groups == []
    changed = HEALTH.replace("health_sensitivity: 50", "health_sensitivity: 20")
    changed = changed.replace("recovery_limit: 600", "recovery_limit: 60")
    result = diff(str(site_with(tmp_path, changed, "b.yaml")), str(out / "modprobe"))
    assert {g.diff.tunables for g in result.groups} == {
        (("health_sensitivity", 50, 20), ("recovery_limit", 600, 60))
    }
    steps = plan_changes(result)
    assert {s.commands for s in steps if s.title == "set LNet tunables"} == {
        ("lnetctl set health_sensitivity 20", "lnetctl set recovery_limit 60")
    }
    assert all(not s.outage for s in steps if s.title == "set LNet tunables")
