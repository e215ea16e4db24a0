"""Hostile inventories that used to pass validation and break a later command, or whose refusal
quoted a huge value back: each is now refused by ``validate`` at its place.

* a rate beyond what a float holds (``"999...9 TB/s"``, 400 digits) read as infinity: analyze
  called the site's rates "not given" and its JSON held ``Infinity`` and ``NaN``;
* free text (``description``, a rate's ``source``, an ``acknowledge`` reason) with a NUL, an
  escape sequence or a bidi override: ``report`` wrote the NUL into its HTML;
* a leaf module, TOR or spine with more ports than an InfiniBand switch chip has (254):
  ``validate`` said valid, then ``fabric export`` and ``fabric check`` failed with an error
  naming neither line nor place;
* a number of thousands of digits was quoted back whole (5 kB per value, 32 MB for a file of
  them).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import ROOT

from lnetgen.cli import main
from lnetgen.diagnostics import Diagnostic
from lnetgen.inventory import check
from lnetgen.rates import MAX_MB_S, MIN_MB_S, parse_rate

DEMO_TEXT = (ROOT / "sites" / "demo.yaml").read_text(encoding="utf-8")
DEMO: dict[str, Any] = yaml.safe_load(DEMO_TEXT)


def _write(tmp_path: Path, data: dict[str, Any] | str, name: str = "site.yaml") -> Path:
    f = tmp_path / name
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    f.write_text(text, encoding="utf-8")
    return f


def _errors(path: Path) -> list[Diagnostic]:
    site, diags = check(str(path))
    errs = [d for d in diags if d.severity == "error"]
    assert (site is None) == bool(errs)
    return errs


# ------------------------------------------------------------------------------------ rates


@pytest.mark.parametrize(
    ("rate", "valid"),
    [
        ("9" * 400 + " TB/s", False),  # float('9' * 400) is inf
        ("1" + "0" * 300 + " TB/s", False),  # finite, but sums of it overflow
        ("1000001 TB/s", False),
        ("0.0000000001 MB/s", False),
        ("0." + "0" * 400 + "1 MB/s", False),  # underflows to 0.0
        ("0.000001 MB/s", True),
        ("1000000 TB/s", True),
    ],
)
def test_rates_are_bounded(rate: str, valid: bool) -> None:
    if valid:
        assert MIN_MB_S <= parse_rate(rate) <= MAX_MB_S
    else:
        with pytest.raises(ValueError, match="outside the rates lnetgen models"):
            parse_rate(rate)


def test_rate_text_is_quoted_back_short() -> None:
    with pytest.raises(ValueError) as exc:
        parse_rate("9" * 400 + " TB/s")
    assert len(str(exc.value)) < 200 and "(405 characters)" in str(exc.value)


def test_an_infinite_rate_is_refused_at_its_place(tmp_path: Path) -> None:
    """It passed validation; ``analyze --format json`` then wrote ``"ost_mb_s": Infinity``
    and ``"saturation": NaN`` (not JSON) and listed the rates as not given."""
    huge = "9" * 400 + " TB/s"
    text = DEMO_TEXT + (
        f'\nrates:\n  torus_link: {{x: "{huge}", y: "1 GB/s", z: "1 GB/s", source: s}}\n'
        f'  ost: {{rate: "{huge}", source: s}}\n'
    )
    f = _write(tmp_path, text)
    errs = _errors(f)
    assert [(d.code, d.path) for d in errs] == [
        ("E-RATES", "$.rates.torus_link"),
        ("E-RATES", "$.rates.ost"),
    ]
    assert all(d.line > 0 for d in errs)
    r = CliRunner().invoke(main, ["analyze", str(f), "--format", "json"])
    assert r.exit_code == 1, r.output
    json.loads(r.stdout)  # the diagnostics, as strict JSON
    assert "Infinity" not in r.output and "NaN" not in r.output


# -------------------------------------------------------------------------------- free text

_NASTY = ["a\x00b", "\x1b[2J", "x\u202ey", "bell\x07", "\x85", "a\u2028b", "\x7f"]


@pytest.mark.parametrize("text", _NASTY)
def test_free_text_must_print(tmp_path: Path, text: str) -> None:
    data = copy.deepcopy(DEMO)
    data["description"] = text
    data["rates"] = {
        "ost": {"rate": "180 MB/s", "source": text},
        "torus_link": {"x": "1 GB/s", "y": "1 GB/s", "z": "1 GB/s", "source": text},
    }
    data["fabrics"][0]["switches"][0]["rates"] = {"uplink": {"rate": "4 GB/s", "source": text}}
    data["acknowledge"] = [{"code": "W-NET-UNUSED", "reason": text}]
    errs = _errors(_write(tmp_path, data))
    assert sorted((d.code, d.path) for d in errs) == sorted(
        [
            ("E-SCHEMA", "$.description"),
            ("E-SCHEMA", "$.rates.ost.source"),
            ("E-SCHEMA", "$.rates.torus_link.source"),
            ("E-SCHEMA", "$.fabrics[0].switches[0].rates.uplink.source"),
            ("E-SCHEMA", "$.acknowledge[0].reason"),
        ]
    )
    assert all(d.line > 0 and "does not print" in d.message for d in errs)


def test_free_text_may_break_lines(tmp_path: Path) -> None:
    data = copy.deepcopy(DEMO)
    data["description"] = "first line\n\tsecond line, Ünïcödé 東京\n"
    data["rates"] = {"ost": {"rate": "180 MB/s", "source": "seed 000\ns3"}}
    assert _errors(_write(tmp_path, data)) == []


def test_report_html_holds_no_nul(tmp_path: Path) -> None:
    """``report`` put a description's NUL into the HTML: now the inventory is refused."""
    data = copy.deepcopy(DEMO)
    data["description"] = "a\x00b"
    f = _write(tmp_path, data)
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["report", str(f), "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "error[E-SCHEMA] $.description" in r.output
    assert not out.exists()


# --------------------------------------------------------------------------- switch chips


def _leaves(data: dict[str, Any], **kw: int) -> dict[str, Any]:
    data = copy.deepcopy(data)
    data["fabrics"][0]["switches"][0]["leaves"].update(kw)
    return data


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        (_leaves(DEMO, ports=255), "$.fabrics[0].switches[0].leaves", "255 external ports + 12"),
        (_leaves(DEMO, ports=243), "$.fabrics[0].switches[0].leaves", "243 external ports + 12"),
        (_leaves(DEMO, uplinks=4096), "$.fabrics[0].switches[0].leaves", "+ 4096 uplinks"),
    ],
)
def test_a_leaf_chip_has_at_most_254_ports(
    tmp_path: Path, data: dict[str, Any], path: str, words: str
) -> None:
    """It validated; ``fabric export`` then said ``error[E-FABRIC] $.fabrics: core1/L01 would
    need 267 ports`` with no line, and ``fabric check`` the same."""
    f = _write(tmp_path, data)
    errs = _errors(f)
    assert [(d.code, d.path) for d in errs] == [("E-SWITCH", path)]
    assert words in errs[0].message and "at most 254 ports" in errs[0].message
    lines = f.read_text(encoding="utf-8").splitlines()
    assert lines[errs[0].line - 1].strip().startswith("leaves:")  # core1's, the first
    for cmd in (["fabric", "export"], ["fabric", "check", "-q"]):
        r = CliRunner().invoke(main, [*cmd, str(f)])
        assert r.exit_code == 1, r.output
        assert f"{f}:{errs[0].line}:" in r.output and "E-SWITCH" in r.output


def test_a_leaf_list_and_a_spine_are_checked(tmp_path: Path) -> None:
    data = copy.deepcopy(DEMO)
    sw = data["fabrics"][0]["switches"][0]
    sw["leaves"] = [
        {"name": "L01", "ports": 12, "uplinks": 12},
        {"name": "L02", "ports": 12, "uplinks": 250},
        {"name": "L03", "ports": 12, "uplinks": 12},
    ]
    errs = _errors(_write(tmp_path, data))
    assert [(d.code, d.path) for d in errs] == [("E-SWITCH", "$.fabrics[0].switches[0].leaves[1]")]
    # 1 spine takes every uplink of 3 leaves: 3 x 100 ports
    sw["leaves"] = {"count": 3, "prefix": "L", "ports": 12, "uplinks": 100}
    sw["spines"] = 1
    errs = _errors(_write(tmp_path, data))
    assert [(d.code, d.path) for d in errs] == [("E-SWITCH", "$.fabrics[0].switches[0].spines")]
    assert "300 ports" in errs[0].message
    # no spines: the uplinks are not cabled, and the leaf has its 12 ports
    sw["spines"] = 0
    assert _errors(_write(tmp_path, data)) == []


def test_a_tor_has_at_most_254_ports(tmp_path: Path) -> None:
    data = copy.deepcopy(DEMO)
    data["fabrics"][0]["switches"].append(
        {"name": "tor9", "kind": "tor", "ports": 300, "guid": "0x0002c90200900000"}
    )
    errs = _errors(_write(tmp_path, data))
    assert [(d.code, d.path) for d in errs] == [("E-SWITCH", "$.fabrics[0].switches[2].ports")]
    data["fabrics"][0]["switches"][2]["ports"] = 254
    assert _errors(_write(tmp_path, data)) == []


# ------------------------------------------------------------------------- long numbers


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("9" * 5000, "E-YAML-SYNTAX"),
        ("!!int " + "9" * 5000, "E-YAML-SYNTAX"),
        ("9" * 4000, "E-SCHEMA"),
    ],
)
def test_a_long_number_is_quoted_back_short(tmp_path: Path, value: str, code: str) -> None:
    """A 5,000-digit number was quoted back whole, 5 kB a value."""
    text = DEMO_TEXT.replace("storage_net_base: 1\n", f"storage_net_base: {value}\n", 1)
    errs = _errors(_write(tmp_path, text))
    assert [(d.code, d.path) for d in errs] == [(code, "$.strategy.storage_net_base")]
    assert len(errs[0].message) < 200, errs[0].message
    assert "characters)" in errs[0].message


# -------------------------------------------------------------------------------- GUIDs


def test_a_port_guid_of_one_is_refused(tmp_path: Path) -> None:
    """Its HCA's node GUID (port GUID - 1) is null: it validated, then ``fabric export`` said
    ``error[E-FABRIC] $.fabrics: oss01 node (port GUID - 1): GUID 0x0000000000000000 is not
    usable`` with no line."""
    data = copy.deepcopy(DEMO)
    data["servers"][0]["guid"] = "0x0000000000000001"
    f = _write(tmp_path, data)
    errs = _errors(f)
    assert [(d.code, d.path) for d in errs] == [("E-GUID", "$.servers[0].guid")]
    r = CliRunner().invoke(main, ["fabric", "export", str(f)])
    assert r.exit_code == 1 and f"{f}:{errs[0].line}:" in r.output, r.output


@pytest.mark.parametrize("chip", ["spine", "leaf", "tor"])
def test_a_host_node_guid_may_not_be_a_chips(tmp_path: Path, chip: str) -> None:
    """rtr01's storage port is 0x0002c90300a00001, so its HCA's node GUID is ...a00000: a chip
    with that GUID made ``fabric export`` and ``fabric check`` fail after a clean validate."""
    data = copy.deepcopy(DEMO)
    sw = data["fabrics"][0]["switches"][0]
    node = "0x0002c90300a00000"
    where = {
        "spine": "spine 1 of core1",
        "leaf": "leaf core1/L02",
        "tor": "switch tor9",
    }[chip]
    if chip == "spine":
        sw["spine_guids"] = [node]
    elif chip == "leaf":
        sw["leaves"] = [
            {"name": f"L0{i}", "ports": 12, "uplinks": 12, **({"guid": node} if i == 2 else {})}
            for i in (1, 2, 3)
        ]
    else:
        data["fabrics"][0]["switches"].append(
            {"name": "tor9", "kind": "tor", "ports": 36, "guid": node}
        )
    f = _write(tmp_path, data)
    errs = _errors(f)
    assert [(d.code, d.path) for d in errs] == [("E-DUP-GUID", "$.routers[0].storage.guid")]
    assert where in errs[0].message and "node GUID" in errs[0].message
    r = CliRunner().invoke(main, ["fabric", "export", str(f)])
    assert r.exit_code == 1 and f"{f}:{errs[0].line}:" in r.output, r.output


def test_a_client_guid_range_may_not_hold_a_chips_node_guid(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "sites" / "wolf.yaml").read_text(encoding="utf-8"))
    base = int(data["clients"][0]["guid_base"], 16)
    data["fabrics"][0].pop("opensm", None)  # its root_guid_file wants every spine's GUID
    # the first client's port GUID is the base, its node GUID one less
    data["fabrics"][0]["switches"][0]["spine_guids"] = [f"0x{base - 1:016x}"]
    errs = _errors(_write(tmp_path, data))
    assert [(d.code, d.path) for d in errs] == [("E-DUP-GUID", "$.clients[0].guid_base")]
    assert "wolf001" not in errs[0].message and "spine 1 of" in errs[0].message


def test_fabric_export_writes_a_tors_own_guid() -> None:
    """A TOR's GUID was replaced by a derived one (0x02...) in the ibsim net file."""
    from lnetgen.fabric import export_ibsim
    from lnetgen.inventory import load_site

    site, _ = load_site(str(ROOT / "sites" / "bluewaters.yaml"))
    text = export_ibsim(site, "home-ib")
    assert 'Switch\t36 "S-0002c90100000001"\t\t# "home01-tor-l"' in text


# ---------------------------------------------------------------------------- dragonfly


def test_a_dragonfly_is_bounded(tmp_path: Path) -> None:
    """4,096 groups of 4,096 switches validated; ``analyze`` then died with a numpy
    MemoryError traceback (2 GiB for one array) under a 2 GB address-space limit."""
    from lnetgen.inventory.topology import MAX_DRAGONFLY_SWITCHES

    data = yaml.safe_load((ROOT / "sites" / "slingshot.yaml").read_text(encoding="utf-8"))
    data["topology"].update(groups=4096, switches_per_group=4096)
    f = _write(tmp_path, data)
    errs = _errors(f)
    assert [(d.code, d.path) for d in errs] == [("E-SCHEMA", "$.topology.groups")]
    assert "16,777,216 switches" in errs[0].message
    r = CliRunner().invoke(main, ["analyze", str(f), "--workload", "none"])
    assert r.exit_code == 1 and "E-SCHEMA" in r.output, r.output
    data["topology"].update(groups=MAX_DRAGONFLY_SWITCHES // 16, switches_per_group=16)
    assert _errors(_write(tmp_path, data)) == []


def test_fabric_check_refuses_a_switch_larger_than_ibsim_simulates(tmp_path: Path) -> None:
    """A director of 1,024 spines validates; ``fabric check`` wrote the net file, started ibsim
    and reported its panic (``new_switch: no more switches (max 256)``).  Now it says which
    switch is too large before anything runs."""
    from lnetgen.fabric import simulate

    if simulate.missing_tools():
        pytest.skip("needs opensm, ibsim-utils and infiniband-diags")
    data = copy.deepcopy(DEMO)
    data["fabrics"][0]["switches"][0]["spines"] = 1024
    f = _write(tmp_path, data)
    assert _errors(f) == []
    r = CliRunner().invoke(main, ["fabric", "check", str(f), "-q"])
    assert r.exit_code == 2, r.output
    assert "core1 of fabric storage-ib: 3 leaf and 1024 spine chip(s)" in r.output
    assert "ibsim simulates at most 256" in r.output and "ibpanic" not in r.output


# ------------------------------------------------------------------- compare


def test_compare_a_valid_site_with_fewer_clients_than_osts(tmp_path: Path) -> None:
    """compare exited 2 (E-PLACE-FULL) on a valid torus site with fewer clients than OSTs:
    the one-client-per-OST placement columns are n/a there."""
    data = copy.deepcopy(DEMO)
    data["clients"][0]["nodes"] = "nid[00001-00002]"
    f = _write(tmp_path, data)
    assert _errors(f) == []
    r = CliRunner().invoke(main, ["compare", str(f), "--workload", "none"])
    assert r.exit_code == 0, r.output
