"""``collect`` holds in memory only the output of the hosts whose commands still run: a host's
output goes to a spool file when its command ends, ``collected_files`` reads the dumps back one
at a time (the same files as when every dump was kept in memory), and no spool file outlives
the run, whether it ended, failed or was interrupted (SIGTERM, Ctrl-C, even ``kill -9``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from lnetgen import __version__
from lnetgen import collect as collect_mod
from lnetgen.diagnostics import UsageError

HOSTS = [f"h{i:02d}" for i in range(1, 41)]
FANOUT = 4
SIZE = 256 * 1024
# per host (%h): a header line, then SIZE bytes without a newline
BIG = f"echo '# %h'; head -c {SIZE} /dev/zero | tr '\\0' x"
PER_HOST = len("# h01\n") + SIZE

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _open_in(directory: Path, pid: int | str = "self") -> list[Path]:
    """The files under ``directory`` that process ``pid`` holds open (named or not)."""
    found = []
    fds = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fds):
        try:
            target = os.readlink(fds / fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith(f"{directory}{os.sep}"):
            found.append(fds / fd)
    return found


def test_at_most_fanout_hosts_outputs_are_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every host's output stayed in memory until the end of the run (40 hosts: 40 x 256 KiB,
    and as much again decoded); now at most the fan-out's, each host's spooled when its
    command ends, and none when ``collect`` returns."""
    outputs: dict[int, Any] = {}
    peak = {"hosts": 0, "bytes": 0}
    add = collect_mod._Output.add

    def counting_add(self: Any, host: str, stderr: bool, data: bytes) -> bool:
        outputs[id(self)] = self
        kept = add(self, host, stderr, data)
        held = [blocks for o in outputs.values() for blocks in o.out.values()]
        peak["hosts"] = max(peak["hosts"], len(held))
        peak["bytes"] = max(peak["bytes"], sum(len(b) for blocks in held for b in blocks))
        return kept

    monkeypatch.setattr(collect_mod._Output, "add", counting_add)
    with collect_mod.collect(
        HOSTS,
        fanout=FANOUT,
        local=True,
        export_command=BIG,
        modprobe_command="echo 'options lnet # %h'",
        spool_dir=str(tmp_path),
    ) as res:
        assert len(outputs) == 3  # the three commands were counted
        assert [o.out for o in outputs.values()] == [{}, {}, {}]  # nothing left in memory
        assert res.failed == {}
        assert 0 < peak["hosts"] <= FANOUT
        assert peak["bytes"] <= FANOUT * PER_HOST
        assert res.dumps["h07"] == b"# h07\n" + b"x" * SIZE  # read back from the spool


def test_the_whole_run_stays_within_a_few_hosts_outputs(tmp_path: Path) -> None:
    """Python's own allocations (tracemalloc: counted, not timed) over ``collect`` and writing
    its files: the fan-out's outputs and one dump with its text, where it was every host's
    output twice (20 MiB here)."""
    warm_up = collect_mod.collect(HOSTS[:1], local=True, spool_dir=str(tmp_path))
    warm_up.close()  # ClusterShell imported and set up before counting
    tracemalloc.start()
    try:
        with collect_mod.collect(
            HOSTS, fanout=FANOUT, local=True, export_command=BIG, spool_dir=str(tmp_path)
        ) as res:
            for _path, text in collect_mod.collected_files(res, "h[01-40]"):
                del text  # write_tree writes each file and lets it go
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (FANOUT + 4) * PER_HOST, f"{peak / PER_HOST:.1f} hosts' outputs"


def test_collected_files_reads_one_dump_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    get = collect_mod._Spool.__getitem__

    def counting_get(self: Any, host: str) -> bytes:
        reads.append(host)
        return get(self, host)

    hosts = HOSTS[:6]
    with collect_mod.collect(
        hosts, fanout=FANOUT, local=True, export_command=BIG, spool_dir=str(tmp_path)
    ) as res:
        monkeypatch.setattr(collect_mod._Spool, "__getitem__", counting_get)
        files = collect_mod.collected_files(res, "h[01-06]")
        assert reads == []  # nothing is read before it is asked for
        path, text = next(files)
        assert (path, text[:6]) == ("h01.yaml", "# h01\n")
        assert reads == ["h01"]
        assert [p for p, _t in files][-2:] == ["failed.txt", "manifest.json"]
        assert reads == [h for h in hosts for _ in ("export", "modprobe")]


def _reference(result: collect_mod.Collected, nodeset: str) -> list[tuple[str, str]]:
    """``collected_files`` as it was when every dump was kept in memory."""
    text = lambda data: data.decode("utf-8", "replace")  # noqa: E731
    files: list[tuple[str, str, str, str]] = []
    for h in result.hosts:
        if h in result.dumps:
            files.append((f"{h}.yaml", text(result.dumps[h]), "lnetctl", h))
        t = text(result.modprobe.get(h, b""))
        if t.strip() and h not in result.failed:
            files.append((f"{h}.conf", t, "modprobe", h))
        if h in result.nets and h not in result.failed:
            files.append((f"{h}.net.yaml", text(result.nets[h]), "lnetctl", h))
    failed = "".join(f"{h}\t{why}\n" for h, why in sorted(result.failed.items()))
    header = f"# generated by lnetgen {__version__}: hosts of {nodeset} that failed or timed out\n"
    files.append(("failed.txt", header + failed, "collect", ""))
    entries = [
        {"path": p, "format": f, "role": "live", "hosts": h, "sha256": _sha(t)}
        for p, t, f, h in sorted(files)
    ]
    manifest = {
        "lnetgen_version": __version__,
        "collected": {
            "nodeset": nodeset,
            "hosts": len(result.hosts),
            "failed": dict(sorted(result.failed.items())),
            "no_nids": dict(sorted(result.no_nids.items())),
        },
        "files": entries,
    }
    return [(p, t) for p, t, _f, _h in files] + [
        ("manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    ]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_files_are_those_of_the_dumps_kept_in_memory(tmp_path: Path) -> None:
    """Same paths, texts (bad UTF-8 replaced), order and manifest (sha256 of the text as
    written, not of the bytes printed)."""
    export = (
        "case %h in bad*) echo 'no lnet' >&2; exit 3 ;; empty*) echo ' ' ;; "
        "latin*) printf 'net: caf\\351\\n' ;; *) printf 'net: \\342\\202\\254 # %h\\n' ;; esac"
    )
    modprobe = (
        "case %h in nbsp*) printf '\\302\\240\\n' ;; none*) ;; "
        "latin*) printf 'options lnet \\377\\n' ;; *) echo 'options lnet # %h' ;; esac"
    )
    hosts = ["ok1", "latin1", "bad1", "empty1", "nbsp1", "none1", "ok2"]
    with collect_mod.collect(
        hosts,
        local=True,
        export_command=export,
        modprobe_command=modprobe,
        net_command="case %h in ok1) echo 'net: # %h' ;; ok2) exit 4 ;; esac",
        spool_dir=str(tmp_path),
    ) as res:
        assert res.failed == {
            "bad1": "exit status 3: no lnet",
            "empty1": "no output from the export command",
        }
        assert res.no_nids["ok2"] == "exit status 4"
        assert res.no_nids["latin1"] == "no output from the net show command"
        files = list(collect_mod.collected_files(res, "some"))
        assert ("ok1.net.yaml", "net: # ok1\n") in files
        in_memory = collect_mod.Collected(
            res.hosts,
            dict(res.dumps),
            dict(res.modprobe),
            dict(res.failed),
            nets=dict(res.nets),
            no_nids=dict(res.no_nids),
        )
    assert files == _reference(in_memory, "some")
    assert [p for p, _t in files] == [
        *("ok1.yaml", "ok1.conf", "ok1.net.yaml", "latin1.yaml", "latin1.conf"),
        *("nbsp1.yaml", "none1.yaml"),
        *("ok2.yaml", "ok2.conf", "failed.txt", "manifest.json"),
    ]
    assert dict(files)["latin1.yaml"] == "net: caf\ufffd\n"
    # a result built by hand (plain dicts) gives the same files too
    assert list(collect_mod.collected_files(in_memory, "some")) == files


@needs_proc
def test_the_spool_is_freed_when_the_result_is_closed(tmp_path: Path) -> None:
    with collect_mod.collect(
        HOSTS[:3], local=True, export_command=BIG, spool_dir=str(tmp_path)
    ) as res:
        spools = _open_in(tmp_path)
        assert len(spools) == 3  # export, modprobe and net show, open while the result is
        assert sum(os.stat(s).st_size for s in spools) >= 3 * PER_HOST
    assert _open_in(tmp_path) == []
    assert os.listdir(tmp_path) == []  # and they never had a name there
    with pytest.raises(ValueError):
        res.dumps["h01"]
    assert res.failed == {} and sorted(res.dumps) == HOSTS[:3]  # the rest stays


def _still_works(tmp_path: Path) -> None:
    """A collect after one that failed, in the same thread (ClusterShell's task is per thread)."""
    with collect_mod.collect(
        ["again1"], local=True, export_command="echo 'net: # %h'", spool_dir=str(tmp_path)
    ) as res:
        assert (res.failed, dict(res.dumps)) == ({}, {"again1": b"net: # again1\n"})


@needs_proc
def test_an_interrupted_collect_frees_its_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while hosts are running, after some were spooled."""
    finish, add = collect_mod._Output.finish, collect_mod._Output.add
    ended: list[str] = []

    def counting_finish(self: Any, host: str, keep: bool) -> None:
        ended.append(host)
        finish(self, host, keep)

    def interrupted(self: Any, host: str, stderr: bool, data: bytes) -> bool:
        if len(ended) >= 5:
            assert len(_open_in(tmp_path)) == 3  # the spool files are open
            raise KeyboardInterrupt
        return add(self, host, stderr, data)

    monkeypatch.setattr(collect_mod._Output, "finish", counting_finish)
    monkeypatch.setattr(collect_mod._Output, "add", interrupted)
    with pytest.raises(KeyboardInterrupt):
        collect_mod.collect(
            HOSTS, fanout=FANOUT, local=True, export_command=BIG, spool_dir=str(tmp_path)
        )
    assert _open_in(tmp_path) == [] and os.listdir(tmp_path) == []
    monkeypatch.undo()
    _still_works(tmp_path)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="uses /dev/full")
def test_a_full_disk_is_an_error_and_frees_the_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []

    def full(dir: str) -> Any:  # every write fails: no space left on device
        assert dir == str(tmp_path)
        opened.append(open("/dev/full", "w+b"))  # noqa: SIM115
        return opened[-1]

    monkeypatch.setattr(collect_mod.tempfile, "TemporaryFile", full)
    with pytest.raises(UsageError) as exc:
        collect_mod.collect(HOSTS, local=True, export_command=BIG, spool_dir=str(tmp_path))
    (diag,) = exc.value.diagnostics
    assert (diag.file, diag.code) == (str(tmp_path), "E-OUTPUT")
    assert os.strerror(errno.ENOSPC) in diag.message
    assert len(opened) == 3 and all(f.closed for f in opened)
    monkeypatch.undo()
    _still_works(tmp_path)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="uses /dev/full")
def test_a_short_write_left_in_the_buffer_does_not_fail_the_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host's first lines (``# h01``) are smaller than the file's buffer: the failed flush
    left them there, and closing the spool raised ``OSError`` a second time, out of
    ``collect``'s clean-up, instead of the ``E-OUTPUT`` the first failure is reported as."""
    opened: list[Any] = []

    def full(dir: str) -> Any:
        opened.append(open("/dev/full", "w+b"))  # noqa: SIM115
        return opened[-1]

    monkeypatch.setattr(collect_mod.tempfile, "TemporaryFile", full)
    spool = collect_mod._Spool("/unused")
    spool.put("h01", [b"# h01\n"])
    assert spool.error == os.strerror(errno.ENOSPC)
    spool.close()
    assert opened[0].closed


def test_an_unusable_spool_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot keep the collected output"):
        collect_mod.collect(HOSTS[:1], local=True, spool_dir=str(tmp_path / "missing"))


def _wait(what: Callable[[], bool], proc: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"never came: {proc.communicate()}")
        time.sleep(0.05)


@needs_proc
@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["sigterm", "sigint", "sigkill"],
)
def test_no_spool_outlives_a_killed_collect(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    """``lnetgen collect`` with TMPDIR set, stopped while one host is spooled and two still
    run: nothing of the spool is left in TMPDIR, even after a ``kill -9``."""
    tmpdir, pid_dir = tmp_path / "tmp", tmp_path / "pids"
    tmpdir.mkdir()
    pid_dir.mkdir()
    command = (
        f"case %h in h1) {BIG} ;; *) sh -c 'sleep 300 & echo $$ $! > {pid_dir}/%h; wait' ;; esac"
    )
    start = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    start += "from lnetgen.cli import main; main()"
    argv = ["collect", "h[1-3]", "--out", str(tmp_path / "live"), "--exec", "--timeout", "600"]
    proc = subprocess.Popen(
        [sys.executable, "-c", start, *argv, "--command", command],
        env=_env(TMPDIR=str(tmpdir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        process_group=0,
    )
    pids: list[int] = []

    def spooled() -> bool:  # h1's output is in the spool (in TMPDIR), h2 and h3 run
        files = _open_in(tmpdir, proc.pid)
        running = all((pid_dir / h).read_text().endswith("\n") for h in ("h2", "h3"))
        return running and sum(os.stat(f).st_size for f in files) > SIZE

    try:
        _wait(lambda: all((pid_dir / h).exists() for h in ("h2", "h3")), proc, 30)
        _wait(spooled, proc, 30)
        pids = [int(p) for h in ("h2", "h3") for p in (pid_dir / h).read_text().split()]
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == code, stderr
        assert os.listdir(tmpdir) == []
        assert not (tmp_path / "live").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in pids:  # kill -9 leaves the commands: nothing could kill them
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_output_cut_off_by_the_timeout_is_not_a_dump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time-out can fire after a host's command exited but before all it printed was read:
    ClusterShell then records exit status 0 and no time-out, and the part read so far was
    written as the host's dump (one run wrote a host's export cut at 15 x 64 KiB).  The host
    times out instead.  Forced here: the reader stalls on the host's first block until past
    the time-out, while the command writes the rest into the pipe and exits."""
    add = collect_mod._Output.add
    stalled: set[str] = set()

    def slow_add(self: collect_mod._Output, host: str, stderr: bool, data: bytes) -> bool:
        if not stderr and host not in stalled:
            stalled.add(host)
            time.sleep(1.5)
        return add(self, host, stderr, data)

    monkeypatch.setattr(collect_mod._Output, "add", slow_add)
    command = "head -c 100000 /dev/zero | tr '\\0' x"
    with collect_mod.collect(
        ["h01"], local=True, timeout=1.0, export_command=command, spool_dir=str(tmp_path)
    ) as result:
        assert "h01" not in result.dumps
        assert result.failed["h01"] == "timed out after 1 s", result.failed
