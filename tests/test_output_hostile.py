"""Hostile outputs: what lnetgen writes never hangs, never writes into a disk, and never loses
a file that is not lnetgen's (README, "Data safety").

Regression tests for: a single-file ``--out`` that is a named pipe nobody reads (the run hung
for ever), ``--out /dev/stdout`` into a pipe (refused as a link), a block device (the plan
was written over the disk), a socket, a private file made world-readable; ``collect`` into a
refused ``--out`` (every host was contacted first, and what they printed thrown away); a file
that came into the output while the new tree was written (deleted with the old tree), an
owned file edited meanwhile, a file that came at the very swap; a manifest that lists the
inventory the run reads (deleted); the old tree lost when the fallback swap failed half-way;
a foreign name with a line break printed as two lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from lnetgen import write
from lnetgen.cli import main
from lnetgen.diagnostics import InputError

DEMO = str(ROOT / "sites" / "demo.yaml")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _short_fifo_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        from lnetgen import onefile
    except ImportError:  # the code before the fix: no wait to shorten
        return
    monkeypatch.setattr(onefile, "FIFO_WAIT", 0.3)


def test_a_fifo_nobody_reads_is_refused_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    _short_fifo_wait(monkeypatch)
    got: list[BaseException | None] = []

    def run() -> None:
        try:
            write.write_file(str(fifo), "{}\n")
            got.append(None)
        except BaseException as exc:  # handed to the test thread
            got.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():  # unblock the writer, then fail
        with open(fifo, "rb") as fh:
            fh.read()
        thread.join(timeout=10)
        pytest.fail("writing to a named pipe nobody reads hung")
    assert isinstance(got[0], InputError)
    assert "nobody opened the named pipe" in got[0].diagnostics[0].message
    assert fifo.is_fifo() and os.listdir(tmp_path) == ["plan.json"]


def test_a_fifo_whose_reader_comes_late_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        import time

        time.sleep(0.5)  # the writer is there first
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    write.write_file(str(fifo), "late reader\n")
    thread.join(timeout=10)
    assert got == [b"late reader\n"]


def test_out_dev_stdout_into_a_pipe_is_written() -> None:
    """``--out /dev/stdout`` (README) is a link to ``/proc/self/fd/1``, a link to a pipe: it
    was refused as "a symbolic link" unless stdout was a terminal."""
    if not os.path.islink("/dev/stdout"):
        pytest.skip("no /dev/stdout link here")
    cmd = [sys.executable, "-m", "lnetgen", "solve", DEMO, "--out", "/dev/stdout"]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b'"client_classes"' in proc.stdout


def _unused_block_device(tmp_path: Path) -> Path:
    """A block device node of a major no driver holds (240-254 are for local use): opening it
    fails, so even the code before the fix, which wrote into it, cannot touch a disk."""
    if os.geteuid() != 0:
        pytest.skip("making a block device node needs root")
    try:
        text = Path("/proc/devices").read_text()
    except OSError:
        pytest.skip("no /proc/devices")
    taken = {int(w.split()[0]) for w in text.split("Block devices:")[-1].splitlines() if w.strip()}
    free = [m for m in range(240, 255) if m not in taken]
    if not free:
        pytest.skip("no unused block major")
    node = tmp_path / "disk"
    try:
        os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(free[0], 0))
    except OSError as exc:
        pytest.skip(f"mknod: {exc}")
    return node


def test_a_block_device_out_is_refused_as_a_disk(tmp_path: Path) -> None:
    node = _unused_block_device(tmp_path)
    res = CliRunner().invoke(main, ["solve", DEMO, "--out", str(node)])
    assert res.exit_code == 2, res.output
    assert "block device" in res.output and "Traceback" not in res.output
    link = tmp_path / "link"
    link.symlink_to(node)
    res = CliRunner().invoke(main, ["solve", DEMO, "--out", str(link)])
    assert res.exit_code == 2 and "symbolic link" in res.output


def test_a_socket_out_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(path))
        except OSError as exc:
            pytest.skip(f"no unix socket here: {exc}")
        res = CliRunner().invoke(main, ["solve", DEMO, "--out", str(path)])
    assert res.exit_code == 2 and "is a socket" in res.output, res.output
    assert path.is_socket()


def test_a_replaced_private_file_stays_private(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    out.write_text("old\n")
    out.chmod(0o600)
    write.write_file(str(out), "new\n")
    assert out.read_text() == "new\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_collect_refuses_its_out_before_contacting_any_host(tmp_path: Path) -> None:
    """A refused --out was found only at the write: every host had been contacted and what
    they printed was thrown away."""
    out = tmp_path / "generated"
    res = CliRunner().invoke(main, ["generate", DEMO, "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    mark = tmp_path / "ran"
    cmd = f"touch {mark}; echo 'net:'"
    res = CliRunner().invoke(
        main, ["collect", "h[1-2]", "--out", str(out), "--exec", "--command", cmd]
    )
    assert res.exit_code == 2 and "E-OUTPUT-FOREIGN" in res.output, res.output
    assert not mark.exists()


# -- the old tree while the new one is written ---------------------------------------------


def _manifest(files: dict[str, str]) -> str:
    entries = [
        {"path": p, "sha256": hashlib.sha256(t.encode()).hexdigest()}
        for p, t in sorted(files.items())
    ]
    return json.dumps({"lnetgen_version": "test", "kind": "generate", "files": entries})


def _tree(files: dict[str, str]) -> list[tuple[str, str]]:
    return [*files.items(), ("manifest.json", _manifest(files))]


def _state(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


OLD = {"a/x.txt": "old x\n", "b.txt": "old b\n"}
NEW = {"a/x.txt": "new x\n", "c.txt": "new c\n"}


def _meanwhile(files: list[tuple[str, str]], act: object) -> Iterator[tuple[str, str]]:
    """``files``, with ``act()`` done after the first is written."""
    for i, item in enumerate(files):
        if i == 1:
            act()  # type: ignore[operator]
        yield item


def test_a_file_that_comes_while_the_tree_is_written_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))
    before = _state(out)
    notes = out / "NOTES.txt"
    with pytest.raises(InputError) as exc:
        write.write_tree(str(out), _meanwhile(_tree(NEW), lambda: notes.write_text("mine\n")))
    (d,) = exc.value.diagnostics
    assert d.code == "E-OUTPUT-FOREIGN" and "NOTES.txt" in d.message
    assert notes.read_text() == "mine\n"
    assert _state(out) == {**before, "NOTES.txt": b"mine\n"}
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_an_owned_file_edited_while_the_tree_is_written_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))

    def edit() -> None:
        (out / "b.txt").write_text("my edit, longer\n")

    with pytest.raises(InputError, match=r"b\.txt"):
        write.write_tree(str(out), _meanwhile(_tree(NEW), edit))
    assert (out / "b.txt").read_text() == "my edit, longer\n"


def test_a_file_that_comes_at_the_swap_is_saved_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))
    real = write._exchange

    def late(a: str, b: str) -> bool:
        Path(b, "late.txt").write_text("late\n")
        return real(a, b)

    monkeypatch.setattr(write, "_exchange", late)
    res = write.write_tree(str(out), _tree(NEW))
    assert _state(out) == {k: v.encode() for k, v in NEW.items()} | {
        "manifest.json": _manifest(NEW).encode()
    }
    saved = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert [p.name.startswith("out.lnetgen-saved-") for p in saved] == [True]
    assert _state(saved[0]) == {"late.txt": b"late\n"}
    assert getattr(res, "saved", None) == str(saved[0])


def test_a_directory_emptied_by_hand_is_no_stranger(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))
    (out / "a" / "x.txt").unlink()
    write.write_tree(str(out), _tree(NEW))
    assert _state(out)["a/x.txt"] == b"new x\n"
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_failed_fallback_swap_puts_the_old_tree_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where directories cannot be exchanged the old tree is renamed aside, then the new one
    in its place: when that second rename failed, the output was gone, its tree left aside
    under a temporary's name (which the next run's sweep deletes)."""
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))
    before = _state(out)
    real = os.rename

    def rename(src: str, dst: str) -> None:
        if os.path.abspath(dst) == str(out) and ".lnetgen-" in src and "old-" not in src:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(write, "_exchange", lambda _a, _b: False)
    monkeypatch.setattr(write.os, "rename", rename)
    with pytest.raises(InputError, match="No space left"):
        write.write_tree(str(out), _tree(NEW))
    monkeypatch.undo()
    assert _state(out) == before
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_a_manifest_listing_the_inventory_does_not_delete_it(tmp_path: Path) -> None:
    """A manifest that lists the inventory with its real hash made it lnetgen's: the run read
    it, did not write it again, and deleted it with the old tree."""
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["generate", DEMO, "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    site = out / "site.yaml"
    site.write_bytes(Path(DEMO).read_bytes())
    doc = json.loads((out / "manifest.json").read_text())
    doc["files"].append(
        {"path": "site.yaml", "sha256": hashlib.sha256(site.read_bytes()).hexdigest()}
    )
    (out / "manifest.json").write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["generate", str(site), "--out", str(out), "-q"])
    assert res.exit_code == 2 and "site.yaml" in res.output, res.output
    assert "input of this run" in res.output
    assert site.read_bytes() == Path(DEMO).read_bytes()


def test_keep_nets_from_the_output_still_replaces_its_plan(tmp_path: Path) -> None:
    """The plan read with --keep-nets from the tree is lnetgen's own: it is written again."""
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["generate", DEMO, "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    plan = out / "plan.json"
    args = ["generate", DEMO, "-s", "projection", "--keep-nets", str(plan), "--out", str(out)]
    res = CliRunner().invoke(main, [*args, "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(plan.read_text())["strategy"] == "projection"


def test_a_foreign_name_with_a_line_break_is_escaped(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write.write_tree(str(out), _tree(OLD))
    (out / "evil\nname").write_text("x")
    with pytest.raises(InputError) as exc:
        write.write_tree(str(out), _tree(NEW))
    message = exc.value.diagnostics[0].message
    assert "evil\\nname" in message and "\n" not in message


def test_collect_keeps_a_file_that_came_at_the_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "live"
    dump = tmp_path / "dump.yaml"
    dump.write_text("net:\n    - net type: lo\n")
    args = ["collect", "h[1-2]", "--out", str(out), "--exec", "--command", f"cat {dump}"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    real = write._exchange

    def late(a: str, b: str) -> bool:
        Path(b, "notes.txt").write_text("evidence\n")
        return real(a, b)

    monkeypatch.setattr(write, "_exchange", late)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    (saved,) = tmp_path.glob("live.lnetgen-saved-*")
    assert (saved / "notes.txt").read_text() == "evidence\n"
    assert f"kept in {saved}" in res.output


def test_out_dev_stdin_is_refused_not_hung() -> None:
    """``--out /dev/stdin`` with standard input a pipe wrote into the pipe this run holds the
    reading end of: past the pipe's buffer (a plan larger than 64 KiB) it waited for ever."""
    if not os.path.islink("/dev/stdin"):
        pytest.skip("no /dev/stdin link here")
    cmd = [sys.executable, "-m", "lnetgen", "solve", DEMO, "--out", "/dev/stdin"]
    with subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            _out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("--out /dev/stdin hung")
    assert proc.returncode == 2, err.decode()
    assert b"standard input" in err


def test_a_huge_value_in_a_dump_is_not_printed_whole(tmp_path: Path) -> None:
    """Readers quote the value they refuse: a 100 KB net name was printed whole."""
    live = tmp_path / "live"
    live.mkdir()
    (live / "rtr01.yaml").write_text(f"route:\n  - net: {'A' * 100_000}\n    gateway: x@tcp\n")
    res = CliRunner().invoke(main, ["diff", DEMO, "--live", str(live)])
    assert res.exit_code == 1, res.output
    (line,) = [ln for ln in res.output.splitlines() if "rtr01.yaml" in ln]
    assert len(line) < 600 and "characters left out" in line
    assert line.endswith("is not an LNet network name (expected e.g. o2ib1, gni)")


def test_a_name_already_in_the_new_tree_is_not_written_over(tmp_path: Path) -> None:
    """On a case-insensitive file system ``RTR01.yaml`` is ``rtr01.yaml``: the second file
    replaced the first without a word.  Simulated: the name is there when its turn comes."""
    out = tmp_path / "out"

    def files() -> Iterator[tuple[str, str]]:
        yield "rtr01.yaml", "first\n"
        (new,) = tmp_path.glob(".out.lnetgen-*")
        (new / "RTR01.yaml").write_text("first\n")  # what the file system shows
        yield "RTR01.yaml", "second\n"

    with pytest.raises(InputError) as exc:
        write.write_tree(str(out), files())
    message = exc.value.diagnostics[0].message
    assert "RTR01.yaml" in message and "already wrote" in message
    assert sorted(os.listdir(tmp_path)) == []


def test_generate_says_where_a_file_that_came_at_the_swap_was_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    args = ["generate", DEMO, "--out", str(out), "--formats", "lnetctl"]
    assert CliRunner().invoke(main, args).exit_code == 0
    real = write._exchange

    def late(a: str, b: str) -> bool:
        Path(b, "notes.txt").write_text("evidence\n")
        return real(a, b)

    monkeypatch.setattr(write, "_exchange", late)
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    (saved,) = tmp_path.glob("out.lnetgen-saved-*")
    assert (saved / "notes.txt").read_text() == "evidence\n"
    assert f"files put there while it was replaced were kept in {saved}" in res.stderr
    assert json.loads(res.stdout)["saved"] == str(saved)


def test_generate_refuses_its_out_before_solving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused --out was found only after the solve (5 s on Blue Waters)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("the user's\n")
    import lnetgen.api

    def solve(*_a: object, **_k: object) -> None:
        raise AssertionError("solved before --out was checked")

    monkeypatch.setattr(lnetgen.api, "generate", solve)
    res = CliRunner().invoke(main, ["generate", DEMO, "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "E-OUTPUT-FOREIGN" in res.output and "mine.txt" in res.output
    assert (out / "mine.txt").read_text() == "the user's\n"


def test_report_without_o_keeps_a_users_report_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lnetgen report SITE`` replaced any report.html in the current directory."""
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "report.html"
    mine.write_text("<html>the user's own notes</html>\n")
    args = ["report", DEMO, "--workload", "none", "-q"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    assert "report.html: error[E-OUTPUT-FOREIGN]" in res.output and "give -o" in res.output
    assert mine.read_text() == "<html>the user's own notes</html>\n"
    # named with -o it is replaced, as any -o; then the default replaces lnetgen's own report
    assert CliRunner().invoke(main, [*args, "-o", "report.html"]).exit_code == 0
    assert 'content="lnetgen ' in mine.read_text()
    assert CliRunner().invoke(main, args).exit_code == 0


def test_a_single_file_out_ending_with_a_slash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``solve --out sub/`` for a directory that does not exist wrote a file named ``sub``."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["solve", DEMO, "--out", "sub/"])
    assert r.exit_code == 2, r.output
    assert "ends with a slash" in r.output
    assert list(tmp_path.iterdir()) == []
