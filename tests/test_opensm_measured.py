"""A recorded OpenSM setting carries its measurement (``fabrics[].opensm.measured``): the
inventory reads it as one printable line, ``generate`` writes it into opensm.conf next to the
settings (and warns, W-OPENSM-UNMEASURED, about settings recorded without one), and
``fabric check`` prints the ``opensm:`` line to record, ``measured:`` with its figures and the
OpenSM version included.  Before, the figure lived only in a YAML comment of sites/wolf.yaml
and an unmeasured record was written just the same."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import CASES, wolf_unrecorded

from lnetgen.cli import main
from lnetgen.cli.fabric import check_dict, command, verdict_lines
from lnetgen.diagnostics import Diagnostic
from lnetgen.fabric import advise, fabric_digest, fabric_of, simulate
from lnetgen.fabric.digest import recorded_digest, recorded_plan
from lnetgen.fabric.osmversion import opensm_version
from lnetgen.inventory import check, load_site
from lnetgen.model import OpenSMChoice

SITES = Path(__file__).resolve().parent.parent / "sites"
WOLF_DIGEST = "2212f9d84334"  # wolf-ib as sites/wolf.yaml cables it
WOLF_MEASURED = (
    f"fabric check, OpenSM 3.3.23, fabric {WOLF_DIGEST}: busiest leaf uplink 1.00x against "
    "12.00x with no setting"
)
WOLF_LINE = (
    "opensm: {io_guid_file: true, cn_guid_file: true, root_guid_file: true, "
    f'max_reverse_hops: 1, measured: "{WOLF_MEASURED}"}}'
)
RECORD = "    opensm: {io_guid_file: true, cn_guid_file: true, root_guid_file: true, "


def _wolf_with(tmp_path: Path, opensm: str) -> Path:
    """Wolf with its wolf-ib record replaced by ``opensm`` (a flow mapping)."""
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    (line,) = [ln for ln in text.splitlines(keepends=True) if ln.startswith(RECORD)]
    path = tmp_path / "wolf.yaml"
    path.write_text(text.replace(line, f"    opensm: {opensm}\n"), encoding="utf-8")
    return path


def _conf(path: Path, fabric: str = "wolf-ib") -> tuple[str, list[str]]:
    from lnetgen.api import generate

    gen = generate(str(path), formats="opensm")
    conf = {f.path: f.content for f in gen.files}[f"opensm/{fabric}/opensm.conf"]
    return conf, [w.code for w in gen.warnings]


# ----------------------------------------------------------------------------- the inventory


def test_wolf_records_its_measurement() -> None:
    site, warnings = load_site(str(SITES / "wolf.yaml"))
    rec = fabric_of(site, "wolf-ib").opensm
    assert rec is not None and rec.measured == WOLF_MEASURED
    assert rec == OpenSMChoice(True, True, True, 1)  # the text is no setting
    assert warnings == []
    assert f"    {WOLF_LINE}\n" in (SITES / "wolf.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("measured", "char"),
    [
        (r'"1.00x\nagainst 12.00x"', "U+000A"),  # a line break would start an opensm.conf line
        (r'"1.00x\tagainst"', "U+0009"),
        (r'"1.00x \e[31m"', "U+001B"),
        (r'"1.00x \u202e against"', "U+202E"),  # bidi override
        (r'"1.00x \u0085 against"', "U+0085"),  # C1 next line
    ],
)
def test_measured_that_does_not_print_is_located(tmp_path: Path, measured: str, char: str) -> None:
    path = _wolf_with(tmp_path, f"{{io_guid_file: true, measured: {measured}}}")
    site, diags = check(str(path))
    assert site is None
    (d,) = [d for d in diags if d.severity == "error"]
    assert d.code == "E-SCHEMA" and d.path == "$.fabrics[0].opensm.measured", d.format()
    assert d.line == 91 and d.col > 5 and char in d.message, d.format()


@pytest.mark.parametrize(
    ("measured", "code"),
    [('"' + "x" * 301 + '"', "E-SCHEMA"), ('""', "E-SCHEMA"), ("1.5", "E-SCHEMA-TYPE")],
)
def test_measured_is_a_bounded_string(tmp_path: Path, measured: str, code: str) -> None:
    path = _wolf_with(tmp_path, f"{{io_guid_file: true, measured: {measured}}}")
    site, diags = check(str(path))
    assert site is None
    assert [(d.code, d.path, d.line) for d in diags if d.severity == "error"] == [
        (code, "$.fabrics[0].opensm.measured", 91)
    ]


def test_measured_of_300_characters_is_read(tmp_path: Path) -> None:
    path = _wolf_with(tmp_path, f'{{io_guid_file: true, measured: "{"é" * 300}"}}')
    site, _ = load_site(str(path))
    rec = fabric_of(site, "wolf-ib").opensm
    assert rec is not None and rec.measured == "é" * 300


# ----------------------------------------------------------------------------- generate


def test_opensm_conf_states_the_measurement_next_to_the_settings() -> None:
    conf, codes = _conf(SITES / "wolf.yaml")
    lines = conf.splitlines()
    at = lines.index("routing_engine ftree")
    assert lines[at - 1] == f"# Measured (fabrics[].opensm.measured): {WOLF_MEASURED}"
    assert "NOT MEASURED" not in conf and "W-OPENSM-UNMEASURED" not in codes
    # the text is a comment: no line but the settings is active
    active = [ln for ln in lines if ln and not ln.startswith("#")]
    assert active == [
        "routing_engine ftree",
        "io_guid_file /etc/opensm/io_guid_file",
        "cn_guid_file /etc/opensm/cn_guid_file",
        "root_guid_file /etc/opensm/root_guid_file",
        "max_reverse_hops 1",
    ]


def test_unmeasured_settings_are_written_with_a_located_warning(tmp_path: Path) -> None:
    path = _wolf_with(
        tmp_path,
        "{io_guid_file: true, cn_guid_file: true, root_guid_file: true, max_reverse_hops: 1}",
    )
    site, diags = check(str(path))
    assert site is not None
    (w,) = [d for d in diags if d.code == "W-OPENSM-UNMEASURED"]
    assert (w.severity, w.path, w.line) == ("warning", "$.fabrics[0].opensm", 91)
    assert "fabric check" in w.hint and "--fabric wolf-ib" in w.hint
    conf, codes = _conf(path)
    assert "W-OPENSM-UNMEASURED" in codes
    lines = conf.splitlines()
    assert "routing_engine ftree" in lines and "max_reverse_hops 1" in lines  # still written
    assert "# NOT MEASURED: the inventory records no measurement for these settings" in lines
    assert "Measured (" not in conf


def test_unmeasured_warning_can_be_acknowledged(tmp_path: Path) -> None:
    """The site owns the decision: it may record settings unmeasured and say why."""
    path = _wolf_with(tmp_path, "{io_guid_file: true}")
    ack = '\nacknowledge:\n  - code: W-OPENSM-UNMEASURED\n    reason: "vendor setting"\n'
    path.write_text(path.read_text(encoding="utf-8") + ack, encoding="utf-8")
    r = CliRunner().invoke(main, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert "acknowledged[W-OPENSM-UNMEASURED] $.fabrics[0].opensm" in r.output


def test_no_record_no_warning() -> None:
    _site, diags = check(str(wolf_unrecorded()))
    assert "W-OPENSM-UNMEASURED" not in [d.code for d in diags]


# ----------------------------------------------------------------------------- which fabric


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    """sites/wolf.yaml with the first ``old`` replaced by ``new``."""
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "wolf.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _stale(path: Path) -> list[Diagnostic]:
    site, diags = check(str(path))
    assert site is not None, [d.format() for d in diags]
    return [d for d in diags if d.code == "W-OPENSM-STALE"]


def test_wolf_measurement_names_the_fabric_it_was_made_on() -> None:
    site, _ = load_site(str(SITES / "wolf.yaml"))
    assert fabric_digest(site, fabric_of(site, "wolf-ib")) == WOLF_DIGEST
    assert recorded_digest(WOLF_MEASURED) == WOLF_DIGEST


def test_a_measurement_naming_no_fabric_is_stale(tmp_path: Path) -> None:
    """Before, a record was taken as measured on whatever the fabric had become: Wolf's own
    text named no fabric, and nothing was said."""
    path = _edited(tmp_path, f", fabric {WOLF_DIGEST}:", ":")
    (w,) = _stale(path)
    assert (w.severity, w.path, w.line) == ("warning", "$.fabrics[0].opensm.measured", 91)
    assert "names no fabric digest" in w.message and f"is fabric {WOLF_DIGEST}" in w.message
    assert "--fabric wolf-ib" in w.hint and "fabric check" in w.hint


@pytest.mark.parametrize(
    "edits",
    [
        # an IO node's port GUID replaced (a new HCA)
        [('guid: "0x0011750a00000001"', 'guid: "0x0011750a00000099"')],
        # two IO nodes recabled, each to the other's leaf
        [
            ("leaf: L01, port: 18}}", "leaf: L99, port: 18}}"),
            ("leaf: L02, port: 18}}", "leaf: L01, port: 18}}"),
            ("leaf: L99, port: 18}}", "leaf: L02, port: 18}}"),
        ],
        # a spine replaced
        [('- "0x0011750200000003"', '- "0x0011750200000099"')],
        # the compute nodes of the last leaf moved up one port
        [("leaf: L36, first_port: 1}", "leaf: L36, first_port: 2}")],
        # a recorded setting changed by hand under the same text
        [("root_guid_file: true, max_reverse_hops: 1,", "root_guid_file: true,")],
    ],
    ids=["hca", "recabled", "spine", "computes", "setting"],
)
def test_a_changed_fabric_makes_the_measurement_stale(
    tmp_path: Path, edits: list[tuple[str, str]]
) -> None:
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "wolf.yaml"
    path.write_text(text, encoding="utf-8")
    (w,) = _stale(path)
    assert w.line == 91 and f"made on fabric {WOLF_DIGEST}, this is fabric" in w.message
    conf, codes = _conf(path)
    assert "W-OPENSM-STALE" in codes and "io_guid_file /etc/opensm/io_guid_file" in conf


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("site: wolf", "site: wolf-renamed"),
        ("wolf-ib", "wolf-fabric"),  # every chip and host has its GUID
        ("wolf-io01", "wolf-gw01"),
        ("interface: ib0", "interface: ib3"),
        (
            'measured: "fabric check, OpenSM 3.3.23, fabric ',
            'measured: "fabric check, OpenSM 3.3.23, FABRIC ',
        ),
        ('router: {rate: "2.3 GB/s"', 'router: {rate: "2.5 GB/s"'),  # rates route nothing
        # an IO node's storage side, on the other fabric
        (
            "attach: {switch: lbcore1, leaf: L01, port: 1}",
            "attach: {switch: lbcore1, leaf: L01, port: 9}",
        ),
    ],
)
def test_what_routing_cannot_see_keeps_the_measurement(tmp_path: Path, old: str, new: str) -> None:
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "wolf.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")  # every occurrence
    assert _stale(path) == []


def test_a_switch_renamed_keeps_the_measurement_and_a_derived_guid_does_not(
    tmp_path: Path,
) -> None:
    """Names are in the digest only where a GUID is derived from them."""
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    path = tmp_path / "wolf.yaml"
    path.write_text(text.replace("wfibcore1", "wfcore-a"), encoding="utf-8")
    assert _stale(path) == []
    no_guid = 'guid: "0x0011750a00000001",'
    assert no_guid in text
    path.write_text(text.replace(no_guid, ""), encoding="utf-8")
    (w,) = _stale(path)  # the IO node's GUID is now derived from its name
    renamed = text.replace(no_guid, "").replace("wolf-io01", "wolf-gw01")
    path.write_text(renamed, encoding="utf-8")
    (w2,) = _stale(path)
    assert w.message.split("this is fabric ")[1] != w2.message.split("this is fabric ")[1]


def test_the_digest_does_not_depend_on_the_hash_seed() -> None:
    code = (
        "from lnetgen.inventory import load_site; from lnetgen.fabric import fabric_digest; "
        f"s, _ = load_site({str(SITES / 'wolf.yaml')!r}); "
        "print(*(fabric_digest(s, f) for f in s.fabrics))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1 and WOLF_DIGEST in outs.pop()


def test_a_storage_measurement_of_another_plan_is_stale(tmp_path: Path) -> None:
    text = (CASES / "valid" / "opensm-measured" / "site.yaml").read_text(encoding="utf-8")
    path = tmp_path / "site.yaml"
    path.write_text(text.replace("nearest-neighbor plan", "projection plan"), encoding="utf-8")
    (w,) = _stale(path)
    assert w.path == "$.fabrics[1].opensm.measured"
    assert "routes of the projection plan, not of the inventory's strategy (nearest-neighbor)" in (
        w.message
    )


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("fabric check, OpenSM, groups plan, fabric 0123456789ab: 1.00x", "groups"),
        ("fabric check, OpenSM, Round-Robin plan: 1.00x", "round-robin"),
        ("fabric check, OpenSM, nearest-neighbor plan: 1.00x", "nearest-neighbor"),
        ("measured by hand, recabling plan pending", None),  # not a strategy
        ("fabric check, OpenSM: 1.00x", None),
    ],
)
def test_the_plan_is_read_back_only_as_a_strategy(text: str, plan: str | None) -> None:
    assert recorded_plan(text) == plan


def test_a_storage_measurement_naming_no_plan_is_stale(tmp_path: Path) -> None:
    text = (CASES / "valid" / "opensm-measured" / "site.yaml").read_text(encoding="utf-8")
    path = tmp_path / "site.yaml"
    path.write_text(text.replace(" nearest-neighbor plan,", ""), encoding="utf-8")
    (w,) = _stale(path)
    assert w.path == "$.fabrics[1].opensm.measured" and "names no plan" in w.message


def test_stale_warning_can_be_acknowledged(tmp_path: Path) -> None:
    path = _edited(tmp_path, 'guid: "0x0011750a00000001"', 'guid: "0x0011750a00000099"')
    ack = '\nacknowledge:\n  - code: W-OPENSM-STALE\n    reason: "HCA swapped, same port"\n'
    path.write_text(path.read_text(encoding="utf-8") + ack, encoding="utf-8")
    r = CliRunner().invoke(main, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert "acknowledged[W-OPENSM-STALE] $.fabrics[0].opensm.measured" in r.output


# ----------------------------------------------------------------------------- fabric check


def _verdict(best: str, recorded: bool = False) -> advise.Verdict:
    none = advise.Candidate("none", "ftree", OpenSMChoice())
    mrh = OpenSMChoice(True, True, True, 1)
    files = advise.Candidate("guid-files-mrh1", "ftree + files", mrh, recorded=recorded)
    v = advise.Verdict("wolf-ib", {"none": 12.0, "guid-files-mrh1": 1.0}, {}, {}, none, none)
    v.best = files if best == "guid-files-mrh1" else none
    if recorded:
        v.written = files
    return v


@pytest.mark.parametrize("recorded", [False, True])
def test_advice_prints_the_yaml_to_record(tmp_path: Path, recorded: bool) -> None:
    v = _verdict("guid-files-mrh1", recorded)
    v.version, v.digest = "OpenSM 3.3.23", WOLF_DIGEST
    lines = verdict_lines(v)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    if recorded:  # the advice as before, first
        assert lines[at] == (
            "advice: fabric wolf-ib: keep the recorded settings (io_guid_file, cn_guid_file, "
            "root_guid_file, max_reverse_hops 1: 1.00x against 12.00x with no setting)"
        )
    else:
        assert lines[at] == (
            "advice: fabric wolf-ib: record opensm: {io_guid_file: true, cn_guid_file: true, "
            "root_guid_file: true, max_reverse_hops: 1} (1.00x against 12.00x with no setting)"
        )
    # then the line to put in the fabric's entry, indented as there
    assert lines[at + 1] == f"    {WOLF_LINE}"
    doc = check_dict([], v)
    assert doc["record"] == WOLF_LINE and doc["measured"] == WOLF_MEASURED
    assert doc["opensm_version"] == "OpenSM 3.3.23"
    # what it prints is what the inventory takes: the same settings, measured, no warning
    path = _wolf_with(tmp_path, WOLF_LINE.removeprefix("opensm: "))
    site, diags = check(str(path))
    assert site is not None and diags == []
    rec = fabric_of(site, "wolf-ib").opensm
    assert rec == v.best.choice and rec is not None and rec.measured == WOLF_MEASURED
    assert yaml.safe_load(WOLF_LINE)["opensm"]["measured"] == WOLF_MEASURED


def test_advice_to_record_none_prints_no_yaml() -> None:
    v = _verdict("none")
    v.version = "OpenSM 3.3.23"
    lines = verdict_lines(v)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    assert "record no OpenSM setting" in lines[at]
    assert not any("opensm: {" in ln for ln in lines[at + 1 :])
    doc = check_dict([], v)
    assert doc["record"] is None and doc["measured"] is None


def test_measured_names_a_storage_fabrics_plan() -> None:
    v = _verdict("guid-files-mrh1")
    v.plan, v.digest = "groups", "0123456789ab"
    text = advise.measured_text(v)
    assert text == (
        "fabric check, OpenSM, groups plan, fabric 0123456789ab: busiest leaf uplink 1.00x "
        "against 12.00x with no setting"
    )
    assert json.dumps(text) in advise.record_yaml(v)
    assert recorded_plan(text) == "groups" and recorded_digest(text) == "0123456789ab"
    assert recorded_plan(text.replace("groups", "nearest-neighbor")) == "nearest-neighbor"


def test_recorded_measurement_does_not_make_a_candidate_of_its_own() -> None:
    """Recorded settings with a measured text are the same candidate as those settings."""
    site, _ = load_site(str(SITES / "wolf.yaml"))
    cands = advise.candidates(site, fabric_of(site, "wolf-ib"))
    assert [c.key for c in cands if c.recorded] == ["guid-files-mrh1"]
    assert "recorded" not in [c.key for c in cands]


# ----------------------------------------------------------------------------- the version


def _program(tmp_path: Path, body: str) -> str:
    path = tmp_path / "opensm"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ("echo -------; echo 'OpenSM 3.3.23'; echo 'Command Line Arguments:'", "OpenSM 3.3.23"),
        ("echo 'OpenSM 5.17.2.MLNX20240101.abc' >&2", "OpenSM 5.17.2.MLNX20240101.abc"),
        ("printf 'OpenSM 3.3.23\\033[31m\\n'", "OpenSM 3.3.23"),
        ("echo 'no version here'", "OpenSM"),
        ("exit 3", "OpenSM"),
    ],
)
def test_opensm_version(tmp_path: Path, body: str, want: str) -> None:
    assert opensm_version(_program(tmp_path, body)) == want


def test_opensm_version_when_missing_or_endless(tmp_path: Path) -> None:
    assert opensm_version(str(tmp_path / "nothing-here")) == "OpenSM"
    start = time.monotonic()
    assert opensm_version(_program(tmp_path, "exec sleep 30"), timeout=0.5) == "OpenSM"
    assert opensm_version(_program(tmp_path, "exec yes"), timeout=5) == "OpenSM"  # bounded read
    assert time.monotonic() - start < 10


@pytest.mark.integration
@pytest.mark.skipif(bool(simulate.missing_tools()), reason="OpenSM simulation not installed")
def test_fabric_check_prints_what_wolf_records(tmp_path: Path) -> None:
    """sites/wolf.yaml holds the very line ``fabric check`` prints for wolf-ib (with the
    OpenSM it was measured with: 3.3.23)."""
    if opensm_version() != "OpenSM 3.3.23":
        pytest.skip(f"wolf.yaml was measured with OpenSM 3.3.23, not {opensm_version()}")
    r = CliRunner().invoke(
        command, ["check", str(SITES / "wolf.yaml"), "--fabric", "wolf-ib", "-q"]
    )
    assert r.exit_code == 0, r.output
    assert "W-OPENSM-STALE" not in r.stderr  # the record names this very fabric
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    assert lines[at + 1] == f"    {WOLF_LINE}"


@pytest.mark.integration
@pytest.mark.skipif(bool(simulate.missing_tools()), reason="OpenSM simulation not installed")
def test_fabric_check_says_the_record_is_stale_and_prints_the_new_one(tmp_path: Path) -> None:
    """After an HCA of an IO node is replaced, the check repeats the warning and the line it
    prints names the fabric as it is now, which the inventory then takes without one."""
    path = _edited(tmp_path, 'guid: "0x0011750a00000001"', 'guid: "0x0011750a00000099"')
    site, _ = load_site(str(path))
    now = fabric_digest(site, fabric_of(site, "wolf-ib"))
    assert now != WOLF_DIGEST
    r = CliRunner().invoke(command, ["check", str(path), "--fabric", "wolf-ib", "-q"])
    assert r.exit_code == 0, r.output
    assert "warning[W-OPENSM-STALE] $.fabrics[0].opensm.measured" in r.stderr
    other = CliRunner().invoke(command, ["check", str(path), "--fabric", "lustre-ib", "-q"])
    assert other.exit_code == 0 and "W-OPENSM-STALE" not in other.stderr  # not the one checked
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    record = lines[at + 1].strip()
    assert f", fabric {now}: busiest leaf uplink 1.00x" in record
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    (i,) = [k for k, ln in enumerate(text) if ln.startswith(RECORD)]
    text[i] = f"    {record}\n"
    path.write_text("".join(text), encoding="utf-8")
    assert _stale(path) == []


@pytest.mark.integration
@pytest.mark.skipif(bool(simulate.missing_tools()), reason="OpenSM simulation not installed")
def test_fabric_check_on_another_plan_says_its_line_will_be_stale(tmp_path: Path) -> None:
    """Wolf's storage fabric needs settings only under baseline; the line measured there is
    stale in an inventory whose strategy is groups, and the check says so beside it."""
    r = CliRunner().invoke(
        command,
        ["check", str(SITES / "wolf.yaml"), "--fabric", "lustre-ib", "--strategy", "baseline"],
    )
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    assert ", baseline plan, fabric " in lines[at + 1]
    assert (
        "note: measured on the baseline plan, not the inventory's strategy (groups): recorded "
        "as printed, the line is W-OPENSM-STALE until strategy.default is baseline"
    ) in lines
    path = tmp_path / "wolf.yaml"
    text = (SITES / "wolf.yaml").read_text(encoding="utf-8")
    path.write_text(
        text.replace("default: groups", "default: baseline", 1).replace(
            "  - name: lustre-ib\n", f"  - name: lustre-ib\n{lines[at + 1]}\n", 1
        ),
        encoding="utf-8",
    )
    assert _stale(path) == []  # with the strategy it was measured on, the line holds


@pytest.mark.integration
@pytest.mark.skipif(bool(simulate.missing_tools()), reason="OpenSM simulation not installed")
def test_fabric_check_json_names_the_digest_of_what_it_advises() -> None:
    r = CliRunner().invoke(
        command,
        [
            "check",
            str(SITES / "wolf.yaml"),
            "--fabric",
            "lustre-ib",
            "--strategy",
            "baseline",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    (doc,) = json.loads(r.stdout)["fabrics"]
    site, _ = load_site(str(SITES / "wolf.yaml"))
    advised = OpenSMChoice(io_guid_file=True, max_reverse_hops=1)
    assert doc["best"] == "guid-files-mrh1"
    assert doc["fabric_digest"] == fabric_digest(site, fabric_of(site, "lustre-ib"), advised)
    assert f", baseline plan, fabric {doc['fabric_digest']}: " in doc["measured"]
    assert recorded_digest(doc["record"]) == doc["fabric_digest"]


@pytest.mark.parametrize(
    "record",
    [
        '{max_reverse_hops: 0, measured: "set by hand"}',  # no digest: not this fabric's
        "{io_guid_file: true}",  # unmeasured
    ],
)
def test_only_a_measurement_of_this_fabric_silences_the_io_port_warning(
    tmp_path: Path, record: str
) -> None:
    """Any recorded opensm: entry used to silence W-IO-SAME-PORT, also one that routes
    nothing apart ({max_reverse_hops: 0}) and one never measured; ``plan-ports`` then exited
    0 with 22 moves to make."""
    path = _wolf_with(tmp_path, record)
    _site, diags = check(str(path))
    assert "W-IO-SAME-PORT" in [d.code for d in diags]
    r = CliRunner().invoke(main, ["fabric", "plan-ports", str(path)])
    assert r.exit_code == 1 and "W-IO-SAME-PORT" in r.output
    _site, shipped = check(str(SITES / "wolf.yaml"))  # measured here: routed apart
    assert "W-IO-SAME-PORT" not in [d.code for d in shipped]
