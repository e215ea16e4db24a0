"""The output writer never touches what lnetgen does not own (README, "Data safety").

Regression tests for: concurrent runs on one ``--out`` (two real processes), regeneration over
a directory holding a ``.git``, a foreign ``manifest.json``, a file lnetgen never wrote or a file
edited by hand, a symbolic-link ``--out``, and a single-file ``--out`` that is a FIFO.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from lnetgen.api import generate, write_output
from lnetgen.cli import main
from lnetgen.diagnostics import InputError

DEMO = str(ROOT / "sites" / "demo.yaml")
BLUEWATERS = str(ROOT / "sites" / "bluewaters.yaml")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _consistent(out: Path) -> None:
    """Every file the manifest lists is there with its hash, and nothing else is."""
    doc = json.loads((out / "manifest.json").read_text())
    listed = {e["path"]: e["sha256"] for e in doc["files"]}
    present = {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in out.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    assert present == listed


def _demo_tree(out: Path, strategy: str = "groups") -> None:
    write_output(generate(DEMO, strategy), str(out))


def test_two_processes_on_one_out_leave_a_whole_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lnetgen", "generate", BLUEWATERS, "--out", str(out)]
    for _round in range(2):
        procs = [
            subprocess.Popen(
                cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            for _ in range(2)
        ]
        results = [(p.wait(timeout=300), p.stderr.read().decode()) for p in procs if p.stderr]
        for p in procs:
            if p.stdout:
                p.stdout.close()
            if p.stderr:
                p.stderr.close()
        assert any(rc == 0 for rc, _ in results), results
        for rc, err in results:
            assert rc == 0 or "E-OUTPUT-LOCKED" in err, err
            assert "Traceback" not in err
        _consistent(out)
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.lnetgen")]


def test_git_checkout_as_out_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _demo_tree(out)
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    res = CliRunner().invoke(main, ["generate", DEMO, "-s", "projection", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "E-OUTPUT-FOREIGN" in res.output and ".git/" in res.output
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert "routes/" not in res.output  # owned files are not listed as foreign


def test_file_lnetgen_never_wrote_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _demo_tree(out)
    (out / "NOTES.txt").write_text("mine\n")
    with pytest.raises(InputError) as exc:
        _demo_tree(out, "projection")
    assert "NOTES.txt" in exc.value.diagnostics[0].message
    assert (out / "NOTES.txt").read_text() == "mine\n"
    _consistent_without(out, "NOTES.txt")


def _consistent_without(out: Path, extra: str) -> None:
    (out / extra).rename(out.parent / extra)
    _consistent(out)


@pytest.mark.parametrize(
    "manifest",
    ['{"name": "my-npm-package", "files": []}', "not json", '{"lnetgen_version": 1}'],
)
def test_foreign_manifest_is_refused(tmp_path: Path, manifest: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(manifest)
    (out / "index.js").write_text("x\n")
    with pytest.raises(InputError) as exc:
        _demo_tree(out)
    assert exc.value.diagnostics[0].code == "E-OUTPUT-FOREIGN"
    assert (out / "manifest.json").read_text() == manifest
    assert (out / "index.js").exists()


def test_hand_edited_file_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _demo_tree(out)
    edited = out / "lnetctl" / "rtr01.yaml"
    edited.write_text(edited.read_text() + "# local tweak\n")
    res = CliRunner().invoke(main, ["generate", DEMO, "-s", "projection", "--out", str(out)])
    assert res.exit_code == 2 and "E-OUTPUT-EDITED" in res.output and "rtr01.yaml" in res.output
    assert edited.read_text().endswith("# local tweak\n")
    res = CliRunner().invoke(
        main, ["generate", DEMO, "-s", "projection", "--out", str(out), "--force"]
    )
    assert res.exit_code == 0, res.output
    assert not edited.read_text().endswith("# local tweak\n")
    _consistent(out)


def test_deleted_file_is_simply_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _demo_tree(out)
    (out / "lnetctl" / "rtr01.yaml").unlink()
    result = write_output(generate(DEMO, "groups"), str(out))
    assert result.written == ("lnetctl/rtr01.yaml",)
    _consistent(out)


def test_symlinked_out_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    _demo_tree(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(InputError) as exc:
        _demo_tree(link, "projection")
    assert "symbolic link" in exc.value.diagnostics[0].message
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_symlink_inside_old_tree_is_foreign(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _demo_tree(out)
    (tmp_path / "elsewhere").mkdir()
    (out / "data").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError) as exc:
        _demo_tree(out, "projection")
    assert "data/" in exc.value.diagnostics[0].message
    assert (out / "data").is_symlink()


def test_solve_out_to_a_fifo_streams_into_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader)
    thread.start()
    res = CliRunner().invoke(main, ["solve", DEMO, "--out", str(fifo)])
    thread.join(timeout=60)
    assert res.exit_code == 0, res.output
    assert fifo.is_fifo()  # not replaced by a regular file
    assert json.loads(got[0])["site"] == "demo"
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_single_file_out_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "plan-real.json"
    target.write_text("{}\n")
    link = tmp_path / "plan.json"
    link.symlink_to(target)
    res = CliRunner().invoke(main, ["solve", DEMO, "--out", str(link)])
    assert res.exit_code == 2 and "symbolic link" in res.output
    assert link.is_symlink() and target.read_text() == "{}\n"


def _add_entries(out: Path, *entries: dict[str, str]) -> None:
    doc = json.loads((out / "manifest.json").read_text())
    doc["files"] += list(entries)
    (out / "manifest.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("path", ["/nonexistent/x", "../victim.txt", "routes/../../victim.txt"])
def test_manifest_path_outside_the_tree_is_foreign(tmp_path: Path, path: str) -> None:
    """An absolute path in the manifest made generate spin for ever under the lock (dirname of
    "/" is "/"); a ``..`` path with the right hash was reported "removed" though nothing was.
    Both are a manifest lnetgen did not write: refused, everything kept."""
    out = tmp_path / "out"
    _demo_tree(out)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    sha = hashlib.sha256(b"mine\n").hexdigest()
    _add_entries(out, {"path": path, "sha256": sha})
    with pytest.raises(InputError) as exc:
        _demo_tree(out, "projection")
    assert exc.value.diagnostics[0].code == "E-OUTPUT-FOREIGN"
    assert "leaves the tree" in exc.value.diagnostics[0].message
    assert victim.read_text() == "mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.lnetgen")]


def test_deeply_nested_manifest_is_foreign_not_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text("[" * 200_000 + "]" * 200_000)
    (out / "x").write_text("x\n")
    with pytest.raises(InputError) as exc:
        _demo_tree(out)
    assert exc.value.diagnostics[0].code == "E-OUTPUT-FOREIGN"
    assert (out / "x").exists()


def test_oversized_manifest_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lnetgen import leftovers

    out = tmp_path / "out"
    _demo_tree(out)
    monkeypatch.setattr(leftovers, "MANIFEST_MAX", 1000)
    with pytest.raises(InputError, match="larger than"):
        _demo_tree(out, "projection")
    _consistent(out)


def test_generate_and_collect_do_not_replace_each_other(tmp_path: Path) -> None:
    """A collect directory (live dumps) was deleted by generate, and a generated tree by
    collect: each replaces only its own command's output."""
    from lnetgen.collect import Collected, collected_files
    from lnetgen.write import write_tree

    gen = tmp_path / "gen"
    _demo_tree(gen)
    col = tmp_path / "col"
    result = Collected(hosts=("rtr01",), dumps={"rtr01": b"net: []\n"}, modprobe={}, failed={})
    write_tree(str(col), collected_files(result, "rtr01"), kind="collect")
    with pytest.raises(InputError, match="lnetgen collect wrote it"):
        _demo_tree(col)
    assert (col / "rtr01.yaml").read_text() == "net: []\n"
    with pytest.raises(InputError, match="lnetgen generate wrote it"):
        write_tree(str(gen), collected_files(result, "rtr01"), kind="collect")
    _consistent(gen)
    write_tree(str(col), collected_files(result, "rtr01"), kind="collect")  # its own: fine


def test_sweep_removes_only_temporaries_lnetgen_names(tmp_path: Path) -> None:
    """Beside the output, a user's ``.out.lnetgen-notes.txt`` and ``.out.lnetgen-backup/``
    were deleted with the leftovers of a killed run."""
    (tmp_path / ".out.lnetgen-notes.txt").write_text("important\n")
    (tmp_path / ".out.lnetgen-backup").mkdir()
    (tmp_path / ".out.lnetgen-backup" / "f").write_text("keep\n")
    (tmp_path / ".out.lnetgen-20241126").mkdir()  # named like a temporary, but the user's
    (tmp_path / ".out.lnetgen-20241126" / "data").write_text("precious\n")
    (tmp_path / ".out.lnetgen-k2x9_0ab").mkdir()  # a killed run's temporary
    (tmp_path / ".out.lnetgen-k2x9_0ab" / "half").write_text("x\n")
    (tmp_path / ".out.lnetgen-k2x9_0ab" / ".lnetgen-partial").write_text("")
    _demo_tree(tmp_path / "old")
    (tmp_path / "old").rename(tmp_path / ".out.lnetgen-old-q1w2e3r4")  # a swapped-out tree
    _demo_tree(tmp_path / "out")
    assert (tmp_path / ".out.lnetgen-notes.txt").read_text() == "important\n"
    assert (tmp_path / ".out.lnetgen-backup" / "f").read_text() == "keep\n"
    assert (tmp_path / ".out.lnetgen-20241126" / "data").read_text() == "precious\n"
    assert not (tmp_path / ".out.lnetgen-k2x9_0ab").exists()
    assert not (tmp_path / ".out.lnetgen-old-q1w2e3r4").exists()
    _consistent(tmp_path / "out")  # the mark of a temporary is not part of the tree


def test_a_file_named_like_the_lock_is_not_removed(tmp_path: Path) -> None:
    """lnetgen removes its lock file at the end: a user's file of that name (its lock files
    are always empty) was deleted."""
    (tmp_path / ".out.lnetgen.lock").write_text("mylock\n")
    with pytest.raises(InputError, match="lock file"):
        _demo_tree(tmp_path / "out")
    assert (tmp_path / ".out.lnetgen.lock").read_text() == "mylock\n"
    assert not (tmp_path / "out").exists()


def test_a_stopped_single_file_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM (here: the exception it raises) while a single file was written left the
    temporary beside it: only an OSError removed it."""
    from lnetgen import write

    def stopped(_a: str, _b: str) -> None:
        raise SystemExit(143)

    monkeypatch.setattr(write.os, "replace", stopped)
    with pytest.raises(SystemExit):
        write.write_file(str(tmp_path / "plan.json"), "{}\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_read_only_out_is_refused_and_kept(tmp_path: Path) -> None:
    """A read-only output was swapped for a new tree and the old one left behind for good
    (its files could not be removed, yet they were reported removed)."""
    out = tmp_path / "out"
    _demo_tree(out)
    out.chmod(0o555)
    try:
        with pytest.raises(InputError, match="read-only"):
            _demo_tree(out, "round-robin")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    finally:
        out.chmod(0o755)
    _consistent(out)


@pytest.mark.parametrize("command", ["solve", "report", "fabric-export"])
def test_single_file_out_never_replaces_an_input(tmp_path: Path, command: str) -> None:
    """``solve site.yaml --out site.yaml`` replaced the inventory by the plan (and report,
    fabric export with -o the same); a hard link to it is the same file."""
    site = tmp_path / "site.yaml"
    text = Path(DEMO).read_text()
    site.write_text(text)
    alias = tmp_path / "alias.yaml"
    os.link(site, alias)
    for out in (site, alias):
        args = {
            "solve": ["solve", str(site), "--out", str(out)],
            "report": ["report", str(site), "--workload", "none", "-o", str(out)],
            "fabric-export": ["fabric", "export", str(site), "-o", str(out)],
        }[command]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2, res.output
        assert "an input of this run" in res.output
        assert site.read_text() == text


def test_sigterm_removes_the_temporary_tree_and_the_lock(tmp_path: Path) -> None:
    """``kill`` during a generate left its temporary tree (551 MB for Spider) and its lock
    file beside the output until the next run; now it unwinds like Ctrl-C and exits 143."""
    import signal
    import time

    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lnetgen", "generate", BLUEWATERS, "--out", str(out)]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".out.lnetgen-") for p in tmp_path.iterdir()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.skip("the run ended before its temporary tree could be seen")
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 143
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert "Traceback" not in err, err
    if proc.stderr:
        proc.stderr.close()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_generate_does_not_replace_a_kept_fabric_check(tmp_path: Path) -> None:
    out = tmp_path / "kept"
    out.mkdir()
    (out / "fabric.net").write_text("net\n")
    doc = {
        "lnetgen_version": "0",
        "kind": "fabric check --keep",
        "files": [{"path": "fabric.net", "sha256": hashlib.sha256(b"net\n").hexdigest()}],
    }
    (out / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="lnetgen fabric check --keep wrote it"):
        _demo_tree(out)
    assert (out / "fabric.net").read_text() == "net\n"


def test_verify_ping_plan_never_replaces_what_verify_read(tmp_path: Path) -> None:
    """``verify OUT --ping-plan OUT/manifest.json`` replaced the manifest it had just read."""
    out = tmp_path / "out"
    _demo_tree(out)
    before = (out / "manifest.json").read_bytes()
    res = CliRunner().invoke(main, ["verify", str(out), "--ping-plan", str(out / "manifest.json")])
    assert res.exit_code == 2 and "--ping-plan" in res.output, res.output
    assert "is inside OUT_DIR" in res.output, res.output
    assert (out / "manifest.json").read_bytes() == before


def test_ctrl_c_exits_130_not_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C printed "Aborted!" and exited 1, the code for findings."""
    from lnetgen import drysolve

    def interrupted(_site: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(drysolve, "dry_solve_acknowledged", interrupted)
    res = CliRunner().invoke(main, ["validate", DEMO])
    assert res.exit_code == 130 and "Aborted!" in res.output, res.output


def test_sweep_knows_a_swapped_out_tree_by_its_manifest_anywhere(tmp_path: Path) -> None:
    """A big manifest's sorted keys put ``lnetgen_version`` far from either end (Spider's
    tree, killed while it was removed, stayed for good); a tree being removed is moved into
    a marked temporary first."""
    from lnetgen import leftovers

    old = tmp_path / ".out.lnetgen-abcd1234"
    old.mkdir()
    doc = {"files": [], "lnetgen_version": "0", "nids": {"x": "y" * 3_000_000}}
    (old / "manifest.json").write_text(json.dumps(doc, sort_keys=True))
    (old / "lnetctl").mkdir()
    assert leftovers._temporary(str(old))
    gone = tmp_path / "gone"
    _demo_tree(gone)
    leftovers.discard(str(tmp_path), "out", str(gone))
    assert not gone.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lnetgen-abcd1234"]
