"""``lnetgen collect`` on commands that misbehave: output without end is stopped at the
per-host limit (that host fails, the others are collected, memory stays bounded), and an
interrupted collect (SIGTERM, Ctrl-C) or a timed-out host leaves none of its commands running.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from lnetgen import collect as collect_mod
from lnetgen import collect_workers
from lnetgen.cli import main

MIB = 1 << 20
# per host (%h): endless output with newlines, without, on stderr, or a small export
MISBEHAVE = (
    "case %h in yes*) exec yes ;; zero*) exec cat /dev/zero ;; "
    "noisy*) exec yes 'lnetctl: error' >&2 ;; *) echo 'net: # %h' ;; esac"
)
# a shell (its PID) that waits for a background sleep (its PID), both written to DIR/<host>
SLEEPER = "sh -c 'sleep 300 & echo $$ $! > {d}/%h; wait'"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_the_limit_is_16_mib() -> None:
    assert collect_mod.MAX_OUTPUT_BYTES == 16 * MIB


def test_endless_output_fails_that_host_and_the_others_are_collected(tmp_path: Path) -> None:
    """``--command yes`` grew without bound (3.8 GB, then a MemoryError inside ClusterShell);
    output without a newline grew inside ClusterShell's line reader.  Now each host stops at
    the real limit, with its reason, while the other hosts are written."""
    out = tmp_path / "live"
    args = ["collect", "ok[01-02],yes01,zero01,noisy01", "--out", str(out), "--exec"]
    start = time.monotonic()
    r = CliRunner().invoke(main, [*args, "--command", MISBEHAVE])
    assert time.monotonic() - start < 20  # stopped at the limit, not at the 30 s timeout
    assert r.exit_code == 1, r.output
    assert "2 of 5 host(s) collected; failed: noisy01,yes01,zero01 (0 timed out)" in r.stdout
    why = "the export command printed more than 16 MiB (the limit): stopped"
    failed = (out / "failed.txt").read_text(encoding="utf-8").splitlines()[1:]
    assert failed == [f"{h}\t{why}" for h in ("noisy01", "yes01", "zero01")]
    assert f"lnetgen: yes01: {why}" in r.stderr
    assert sorted(os.listdir(out)) == ["failed.txt", "manifest.json", "ok01.yaml", "ok02.yaml"]
    assert (out / "ok01.yaml").read_text(encoding="utf-8") == "net: # ok01\n"


def test_endless_modprobe_output_fails_the_host(tmp_path: Path) -> None:
    out = tmp_path / "live"
    args = ["collect", "h[1-2]", "--out", str(out), "--exec", "--command", "echo 'net: # %h'"]
    r = CliRunner().invoke(main, [*args, "--modprobe-command", "yes"])
    assert r.exit_code == 1, r.output
    assert "the modprobe command printed more than 16 MiB (the limit): stopped" in r.stderr
    assert sorted(os.listdir(out)) == ["failed.txt", "manifest.json"]


def test_the_limit_is_exact_and_counts_error_output() -> None:
    """``limit`` bytes are kept as printed (not as lines); one more fails the host."""
    fill = "head -c {n} /dev/zero | tr '\\0' x"
    command = (
        f"case %h in at*) {fill.format(n=1000)} ;; over*) {fill.format(n=1001)} ;; "
        f"err*) {fill.format(n=600)}; echo; {fill.format(n=600)} >&2 ;; esac"
    )
    hosts = ["at1", "over1", "err1"]
    with collect_mod.collect(hosts, local=True, export_command=command, max_output=1000) as res:
        assert dict(res.dumps) == {"at1": b"x" * 1000}
    assert res.failed == {
        h: "the export command printed more than 1,000 bytes (the limit): stopped"
        for h in ("over1", "err1")
    }


def test_the_ssh_worker_is_bounded_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--exec``: a stand-in ``ssh`` on PATH runs the command here."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ssh = bin_dir / "ssh"
    ssh.write_text(
        "#!/bin/sh\n# ssh [OPTION]... HOST COMMAND\n"
        'for a in "$@"; do host=$cmd; cmd=$a; done\nHOST=$host exec sh -c "$cmd"\n',
        encoding="utf-8",
    )
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    command = 'case $HOST in yes*) exec yes ;; *) echo "net: # $HOST" ;; esac'
    with collect_mod.collect(["ok1", "yes1"], export_command=command, max_output=MIB) as res:
        assert dict(res.dumps) == {"ok1": b"net: # ok1\n"}
    assert res.failed == {"yes1": "the export command printed more than 1 MiB (the limit): stopped"}


def test_a_gateway_trees_lines_are_counted_against_the_limit(tmp_path: Path) -> None:
    """Through gateways the lines come from ClusterShell's event handler (here on the exec
    worker): kept with their newlines, dropped past the limit, spooled when the host ends."""
    from ClusterShell.Task import task_self

    spool = collect_mod._Spool(str(tmp_path))
    output = collect_mod._Output(12, spool)
    handler = collect_workers.workers()[2](output)
    command = "case %h in a) echo short; echo oops >&2 ;; b) echo 0123456789abc ;; esac"
    task = task_self()
    task.shell(command, nodes="a,b", remote=False, tree=False, stderr=True, handler=handler)
    try:
        task.run()
        assert (spool["a"], output.first_err["a"]) == (b"short\n", "oops")
        assert output.over == {"b"} and "b" not in spool
        assert output.out == {} and output.err == {}  # nothing left in memory
    finally:
        spool.close()


def test_memory_stays_bounded_on_endless_output(tmp_path: Path) -> None:
    """Peak RSS of ``collect --command yes`` against one of ``--command true``: the whole
    output (``yes`` writes GB/s until the 10 s timeout) was held, now at most the limit."""

    def peak(command: str) -> int:
        code = (
            "import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=False, capture_output=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        )
        lnetgen = [sys.executable, "-m", "lnetgen", "collect", "h1", "--exec", "--timeout"]
        argv = [*lnetgen, "10", "--out", str(tmp_path / command), "--command", command]
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return int(proc.stdout) * 1024  # ru_maxrss is in KiB

    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0  # Linux: KiB, not pages
    start = time.monotonic()
    grown = peak("yes") - peak("true")
    assert grown < 64 * MIB, f"{grown / MIB:.0f} MiB more"  # the limit, 16 MiB, and slack
    assert time.monotonic() - start < 20


def _state(pid: int) -> str:
    """The process's state letter; "" when it is gone (a zombie counts as gone: dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except (FileNotFoundError, ProcessLookupError):
        return ""
    state = stat.rsplit(")", 1)[1].split()[0]
    return "" if state in ("Z", "X") else state


def _pids(pid_dir: Path, hosts: list[str]) -> list[int]:
    return [int(p) for h in hosts for p in (pid_dir / h).read_text().split()]


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [p for p in pids if _state(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _kill(pids: list[int]) -> None:
    for p in pids:
        if _state(p):
            os.kill(p, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states")
@pytest.mark.parametrize(
    ("sig", "to_group", "code"),
    [
        (signal.SIGTERM, False, 143),  # kill PID
        (signal.SIGINT, False, 130),  # kill -INT PID
        (signal.SIGINT, True, 130),  # Ctrl-C: the terminal signals the whole foreground group
        (signal.SIGHUP, True, 129),  # the ssh session drops: the same group gets a hang-up
    ],
    ids=["sigterm", "sigint", "ctrl-c", "hang-up"],
)
def test_an_interrupted_collect_kills_its_commands(
    tmp_path: Path, sig: signal.Signals, to_group: bool, code: int
) -> None:
    """The commands (and what they started) went on running after ``kill`` or Ctrl-C,
    re-parented to init: ClusterShell killed only the shell it had started."""
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    hosts = ["h1", "h2", "h3"]
    # SIGINT as a shell's foreground job gets it, whatever this test runner's disposition is
    start = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    start += "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"  # not ignored, as under nohup
    start += "from lnetgen.cli import main; main()"
    argv = ["collect", "h[1-3]", "--out", str(tmp_path / "live"), "--exec", "--timeout", "600"]
    argv += ["--command", SLEEPER.format(d=pid_dir)]
    proc = subprocess.Popen(
        [sys.executable, "-c", start, *argv],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        process_group=0,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while not all(
            (pid_dir / h).exists() and (pid_dir / h).read_text().endswith("\n") for h in hosts
        ):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        pids = _pids(pid_dir, hosts)
        if to_group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == code, stderr
        assert b"Traceback" not in stderr, stderr
        assert _wait_gone(pids, 5) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill(pids)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states")
def test_a_timed_out_host_leaves_nothing_running(tmp_path: Path) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    out = tmp_path / "live"
    args = ["collect", "h[1-2]", "--out", str(out), "--exec", "--timeout", "1"]
    r = CliRunner().invoke(main, [*args, "--command", SLEEPER.format(d=pid_dir)])
    pids = _pids(pid_dir, ["h1", "h2"])
    try:
        assert r.exit_code == 1, r.output
        assert "failed: h[1-2] (2 timed out)" in r.stdout
        assert _wait_gone(pids, 5) == []
    finally:
        _kill(pids)


def test_a_timeout_of_nan_is_refused(tmp_path: Path) -> None:
    """``--timeout nan`` passed click's range check (NaN compares unequal to everything) and
    turned the timeout off: a host that never answers held collect for ever."""
    from click.testing import CliRunner

    from lnetgen.cli import main

    r = CliRunner().invoke(
        main, ["collect", "h1", "--exec", "--timeout", "nan", "--out", str(tmp_path / "c")]
    )
    assert r.exit_code == 2, r.output
    assert "--timeout: 'nan' is not a number" in r.output, r.output
    assert not (tmp_path / "c").exists()
