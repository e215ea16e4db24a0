"""``lnetgen fabric`` never touches what it does not own, nor echoes a file it does not read.

Regression tests for: ``fabric check --keep DIR`` writing with plain ``open(path, "w")``
through a symbolic link to an outside file, over a file of the user's, into a subdirectory
that is a link to an outside directory, and into a DIR that is itself a link (now: a new or
empty DIR, or one an earlier ``--keep`` wrote, replaced whole by ``write_tree``); and
``fabric import ibnetdiscover`` quoting the first line of a file that is not ibnetdiscover
output (a password file's hash came back in the error).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT

from lnetgen.cli import main
from lnetgen.diagnostics import InputError, UsageError
from lnetgen.fabric import keep, parse_ibnetdiscover, simulate

DEMO = str(ROOT / "sites" / "demo.yaml")
SECRET = "root:$6$SECRETHASH$abcdefgh:19000:0:99999:7:::"
#: A file the demo's check keeps, and the directory it is in.
KEPT_DIR = Path("storage-ib") / "guid-files" / "core1"
KEPT_FILE = KEPT_DIR / "opensm.conf"

needs_tools = pytest.mark.skipif(
    bool(simulate.missing_tools()), reason="OpenSM, ibsim or infiniband-diags not installed"
)


def _check(keep_dir: Path | str) -> Result:
    return CliRunner().invoke(main, ["fabric", "check", DEMO, "--keep", str(keep_dir), "-q"])


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


# ----------------------------------------------------------------------------- check --keep


@needs_tools
def test_keep_never_writes_through_a_link_to_an_outside_file(tmp_path: Path) -> None:
    """The sweep's reproduction: opensm.conf a link to victim.txt, which was overwritten."""
    victim = tmp_path / "x" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("VICTIM\n")
    k = tmp_path / "k3"
    (k / KEPT_DIR).mkdir(parents=True)
    (k / KEPT_FILE).symlink_to(victim)
    r = _check(k)
    assert r.exit_code == 2, r.output
    assert "error[E-OUTPUT-FOREIGN]" in r.output and "Traceback" not in r.output
    assert victim.read_text() == "VICTIM\n"
    assert (k / KEPT_FILE).is_symlink() and os.listdir(k / KEPT_DIR) == ["opensm.conf"]


@needs_tools
def test_keep_never_overwrites_a_file_of_the_users(tmp_path: Path) -> None:
    k = tmp_path / "k"
    (k / KEPT_DIR).mkdir(parents=True)
    (k / KEPT_FILE).write_text("my own opensm.conf\n")
    r = _check(k)
    assert r.exit_code == 2 and "error[E-OUTPUT-FOREIGN]" in r.output, r.output
    assert "storage-ib/" in r.output  # what is in the way is listed
    assert _tree(k) == {KEPT_FILE.as_posix(): b"my own opensm.conf\n"}


@needs_tools
def test_keep_never_writes_into_a_linked_subdirectory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    k = tmp_path / "k"
    k.mkdir()
    (k / "storage-ib").symlink_to(outside, target_is_directory=True)
    r = _check(k)
    assert r.exit_code == 2 and "error[E-OUTPUT-FOREIGN]" in r.output, r.output
    assert os.listdir(outside) == []


@needs_tools
def test_keep_directory_that_is_a_link_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / "k"
    link.symlink_to(outside, target_is_directory=True)
    r = _check(link)
    assert r.exit_code == 2 and "error[E-OUTPUT]" in r.output, r.output
    assert "symbolic link" in r.output and str(outside) in r.output
    assert os.listdir(outside) == [] and link.is_symlink()


@needs_tools
def test_keep_replaces_only_what_an_earlier_keep_wrote(tmp_path: Path) -> None:
    """New DIR: written with a manifest of every file's sha256; the same DIR again: replaced;
    a file added, a file edited, or another command's output: refused, nothing changed."""
    k = tmp_path / "kept"
    assert _check(k).exit_code in (0, 1)
    doc = json.loads((k / "manifest.json").read_text())
    assert doc["kind"] == keep.WRITTEN_BY and "lnetgen_version" in doc
    files = _tree(k)
    assert {e["path"] for e in doc["files"]} == set(files) - {"manifest.json"}
    for e in doc["files"]:
        assert hashlib.sha256(files[e["path"]]).hexdigest() == e["sha256"]
    # the kept opensm.conf names the guid files where they were kept, not the staging tree
    conf = (k / KEPT_FILE).read_text()
    assert f"io_guid_file {k / KEPT_DIR / 'io_guid_file'}\n" in conf
    assert (k / KEPT_DIR / "dump_fts.txt").read_text().startswith("Unicast lids")
    assert _check(k).exit_code in (0, 1)  # its own output: replaced

    (k / "NOTES.txt").write_text("mine\n")
    before = _tree(k)
    r = _check(k)
    assert r.exit_code == 2 and "error[E-OUTPUT-FOREIGN]" in r.output and "NOTES.txt" in r.output
    assert _tree(k) == before
    (k / "NOTES.txt").unlink()

    log = k / KEPT_DIR / "opensm.log"
    log.write_text(log.read_text() + "my note\n")
    before = _tree(k)
    r = _check(k)
    assert r.exit_code == 2 and "error[E-OUTPUT-EDITED]" in r.output, r.output
    assert KEPT_DIR.joinpath("opensm.log").as_posix() in r.output
    assert _tree(k) == before

    gen = tmp_path / "generated"
    assert CliRunner().invoke(main, ["generate", DEMO, "--out", str(gen)]).exit_code == 0
    before = _tree(gen)
    r = _check(gen)
    assert r.exit_code == 2 and "lnetgen generate wrote it" in r.output, r.output
    assert _tree(gen) == before


@needs_tools
def test_simulate_never_runs_in_a_directory_that_exists(tmp_path: Path) -> None:
    """ibsim and OpenSM write what they like where they run: never in an existing directory."""
    from lnetgen.fabric import layout
    from lnetgen.inventory import load_site

    site, _ = load_site(DEMO)
    (tmp_path / "mine.txt").write_text("mine\n")
    with pytest.raises(simulate.SimError, match="cannot create"):
        simulate.simulate(layout(site, "storage-ib"), keep=str(tmp_path))
    assert os.listdir(tmp_path) == ["mine.txt"]


def test_check_target_rules(tmp_path: Path) -> None:
    """New and empty directories are accepted, as checked before any simulation."""
    keep.check_target(str(tmp_path / "new"))
    keep.check_target(str(tmp_path))
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        keep.check_target(str(tmp_path / "file"))
    with pytest.raises(UsageError, match="did not write"):
        keep.check_target(str(tmp_path))
    (tmp_path / "file").unlink()
    (tmp_path / "manifest.json").write_text(json.dumps({"lnetgen_version": "1", "files": []}))
    with pytest.raises(UsageError, match="lnetgen generate wrote it"):
        keep.check_target(str(tmp_path))  # another command's manifest
    outside = {
        "lnetgen_version": "1",
        "kind": keep.WRITTEN_BY,
        "files": [{"path": "../x", "sha256": "0"}],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(outside))
    with pytest.raises(UsageError, match="leaves the tree"):
        keep.check_target(str(tmp_path))  # lists a path outside: not what --keep writes


def test_simulation_files_are_created_never_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("VICTIM\n")
    link = tmp_path / "opensm.conf"
    link.symlink_to(target)
    for path in (target, link):
        with pytest.raises(OSError):
            simulate._create(str(path), "routing_engine ftree\n")
    assert target.read_text() == "VICTIM\n"
    simulate._create(str(tmp_path / "new"), "x\n")
    assert (tmp_path / "new").read_text() == "x\n"


# ----------------------------------------------------------------------------- import


def test_import_of_a_password_file_does_not_echo_it(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(f"{SECRET}\ndaemon:*:19000:0:99999:7:::\n")
    r = CliRunner().invoke(main, ["fabric", "import", "ibnetdiscover", str(shadow)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{shadow}:1:1: error[E-IBNET-FORMAT]" in r.output
    assert "this is not ibnetdiscover output" in r.output
    assert "SECRET" not in r.output and "daemon" not in r.output and "99999" not in r.output


def test_lines_before_the_first_node_line_are_located_not_quoted() -> None:
    """A recognised file quotes its bad lines after a node line, to find them; before any
    node line the file may be anything, so only the line number is given."""
    node = 'switchguid=0x10\nSwitch\t4 "S-0000000000000010"\n'
    with pytest.raises(InputError) as exc:
        parse_ibnetdiscover(f"{SECRET}\n{node}", "f")
    (d,) = exc.value.diagnostics
    assert (d.line, d.code) == (1, "E-IBNET") and "SECRET" not in d.message
    with pytest.raises(InputError) as exc:
        parse_ibnetdiscover(f"{node}[1] garbage\n", "f")
    (d,) = exc.value.diagnostics
    assert d.line == 3 and "'[1] garbage'" in d.message


def test_stdin_that_is_not_ibnetdiscover_is_not_echoed() -> None:
    r = CliRunner().invoke(main, ["fabric", "import", "ibnetdiscover", "-"], input=SECRET + "\n")
    assert r.exit_code == 2 and "E-IBNET-FORMAT" in r.output and "SECRET" not in r.output
