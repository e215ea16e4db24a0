"""A recorded OpenSM setting carries its measurement (``fabrics[].opensm.measured``): the
inventory reads it as one printable line, ``generate`` writes it into opensm.conf next to the
settings (and warns, W-OPENSM-UNMEASURED, about settings recorded without one), and
``fabric check`` prints the ``opensm:`` line to record, ``measured:`` with its figures and the
OpenSM version included.  Before, the figure lived only in a YAML comment of sites/wolf.yaml
and an unmeasured record was written just the same."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import wolf_unrecorded

from lnetgen.cli import main
from lnetgen.cli.fabric import check_dict, command, verdict_lines
from lnetgen.fabric import advise, fabric_of, simulate
from lnetgen.fabric.osmversion import opensm_version
from lnetgen.inventory import check, load_site
from lnetgen.model import OpenSMChoice

SITES = Path(__file__).resolve().parent.parent / "sites"
WOLF_MEASURED = (
    "fabric check, OpenSM 3.3.23: busiest leaf uplink 1.00x against 12.00x with no setting"
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
    lines = verdict_lines(v, "OpenSM 3.3.23")
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
    doc = check_dict([], v, "OpenSM 3.3.23")
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
    lines = verdict_lines(v, "OpenSM 3.3.23")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    assert "record no OpenSM setting" in lines[at]
    assert not any("opensm: {" in ln for ln in lines[at + 1 :])
    doc = check_dict([], v)
    assert doc["record"] is None and doc["measured"] is None


def test_measured_names_a_storage_fabrics_plan() -> None:
    text = advise.measured_text(_verdict("guid-files-mrh1"), "OpenSM", "groups")
    assert text == (
        "fabric check, OpenSM, groups plan: busiest leaf uplink 1.00x against 12.00x "
        "with no setting"
    )
    assert json.dumps(text) in advise.record_yaml(_verdict("guid-files-mrh1"), "OpenSM", "groups")


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
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("advice: "))
    assert lines[at + 1] == f"    {WOLF_LINE}"
