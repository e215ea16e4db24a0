"""``fabric plan-ports`` and ``fabric check`` say what they measured and what they advise.

* Reviewer E: ``plan-ports`` on Wolf exited 0 yet printed "22 move(s); recable, then update
  the inventory": the recorded OpenSM settings make the moves unnecessary, and the text now
  says so (they stay printed, as the alternative).  Without the record it still exits 1.
* Its W-IO-SAME-PORT named no line:col, while validate gave ``:169:53:``.
* W-IO-SAME-PORT was missing from ``lnetgen.inventory.CODES``, the list docs/inventory.md
  points to.
* ``fabric check`` said "no route between hosts that exchange data crosses a spine: OpenSM's
  settings change nothing here", but counts only router-server pairs (compute-IO pairs on a
  compute fabric); server-to-server traffic (OSS <-> MDS <-> MGS) can cross.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from click.testing import CliRunner
from conftest import wolf_unrecorded

from lnetgen.cli import main
from lnetgen.fabric import advise
from lnetgen.fabric.simulate import SimResult
from lnetgen.fabric.trace import Direction, Health
from lnetgen.inventory import CODES, check, load_site
from lnetgen.model import Site

ROOT = Path(__file__).resolve().parent.parent
SITES = ROOT / "sites"
WOLF = SITES / "wolf.yaml"


@cache
def _site(name: str) -> Site:
    return load_site(str(SITES / f"{name}.yaml"))[0]


# ---------------------------------------------------------------- plan-ports with a record


def test_recorded_settings_make_the_port_plan_an_alternative() -> None:
    res = CliRunner().invoke(main, ["fabric", "plan-ports", str(WOLF)])
    assert res.exit_code == 0, res.output
    head = res.output.splitlines()[0]
    assert head.startswith("# port plan for wolf: not needed: the recorded OpenSM settings of "
                           "wolf-ib (io_guid_file, cn_guid_file, root_guid_file, "
                           "max_reverse_hops 1; measured: fabric check")  # fmt: skip
    assert "route the IO nodes apart; the 22 move(s) below are an alternative" in head
    assert "22 move(s); recable" not in head
    assert "W-IO-SAME-PORT" not in res.output
    doc = json.loads(
        CliRunner().invoke(main, ["fabric", "plan-ports", str(WOLF), "--format", "json"]).output
    )
    assert doc["needed"] is False and "recorded OpenSM settings" in doc["not_needed"]
    assert len(doc["moves"]) == 22


def test_without_the_record_the_plan_is_needed_and_exit_1() -> None:
    res = CliRunner().invoke(main, ["fabric", "plan-ports", str(wolf_unrecorded())])
    assert res.exit_code == 1, res.output
    assert "# port plan for wolf: 22 move(s); recable, then update the inventory" in res.output
    assert "not needed" not in res.output
    doc = json.loads(
        CliRunner()
        .invoke(main, ["fabric", "plan-ports", str(wolf_unrecorded()), "--format", "json"])
        .stdout
    )
    assert doc["needed"] is True and doc["not_needed"] is None


# ---------------------------------------------------------------- located as validate does


def test_plan_ports_locates_its_warning_as_validate_does() -> None:
    path = str(wolf_unrecorded())
    _site, diags = check(path)
    (v,) = [d for d in diags if d.code == "W-IO-SAME-PORT"]
    assert v.line > 0 and v.col > 0
    res = CliRunner().invoke(main, ["fabric", "plan-ports", path])
    assert f"{path}:{v.line}:{v.col}: warning[W-IO-SAME-PORT] {v.path}: " in res.output
    doc = json.loads(
        CliRunner().invoke(main, ["fabric", "plan-ports", path, "--format", "json"]).stdout
    )
    (f,) = doc["findings"]
    assert (f["line"], f["col"], f["path"]) == (v.line, v.col, v.path)


# ---------------------------------------------------------------- the code list


def test_every_code_validate_and_plan_ports_give_is_in_codes() -> None:
    """docs/inventory.md: "The list is ``lnetgen.inventory.CODES``".  Every code the inventory
    check, the fabric findings validate adds (IO ports, OpenSM records) and the output checks
    name is in it; W-IO-SAME-PORT sat apart in ``acknowledge.OTHER_WARNINGS``.  (The solver's
    codes, E-GROUPS and the like, are documented apart, as solver codes.)"""
    lib = ROOT / "lnetgen"
    files = [
        *sorted((lib / "inventory").glob("*.py")),
        lib / "fabric" / "ports.py",
        lib / "fabric" / "digest.py",
        lib / "emit" / "findings.py",
    ]
    named = {c for f in files for c in re.findall(r'"([EW]-[A-Z0-9-]+)"', f.read_text())}
    assert "W-IO-SAME-PORT" in named
    assert sorted(named - set(CODES)) == []
    _site, diags = check(str(wolf_unrecorded()))
    assert {d.code for d in diags if d.severity != "info"} <= set(CODES)


# ---------------------------------------------------------------- fabric check's note


def _rows(site: Site, fabric: str) -> tuple[object, list[advise.CheckRow]]:
    """One measured row per candidate, no route crossing a spine."""
    fab = next(f for f in site.fabrics if f.name == fabric)
    sim = SimResult(
        "ftree", "", "", Direction(spine=[0, 0]), Direction(spine=[0, 0]), ("a", "b"), Health()
    )
    rows = [advise.CheckRow(c, "sw", sim) for c in advise.candidates(site, fab) if not c.port_plan]
    return fab, rows


def test_nothing_crosses_note_says_what_was_counted() -> None:
    site = _site("demo")
    fab = next(f for f in site.fabrics if f.role == "storage")
    _f, rows = _rows(site, fab.name)
    notes = advise.judge(fab, rows).notes
    (note,) = [n for n in notes if "crosses a spine" in n]
    assert "hosts that exchange data" not in note
    assert note.startswith("no route between a router and a server of one storage net")
    assert "OSS <-> MDS <-> MGS, is not" in note and "change nothing for them" in note
    wolf = _site("wolf")
    compute = next(f for f in wolf.fabrics if f.name == wolf.client_fabric)
    _f, rows = _rows(wolf, compute.name)
    (note,) = [n for n in advise.judge(compute, rows).notes if "crosses a spine" in n]
    assert note.startswith("no route between a compute node and an IO node crosses a spine")
    assert "compute-to-compute traffic is not" in note
