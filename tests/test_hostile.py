"""Hostile and broken inputs: every one is refused cleanly by the real command line.

The corpus lives in ``tests/cases/invalid/hostile-<name>/``: ``site.yaml`` (plus any file it
names) and ``expect.json``::

    {"exit": 1, "code": "E-...", "line": N or null, "message_contains": "...",
     "what": "one line on the input",
     "no_line": "why no line can be given"          (when line is null)
     "file": "coords.csv"                          (diagnostic in another file; default site.yaml)
     "generate_exit": 2, "generate_message": "..."  (generate stops earlier, in option parsing)
     "timeout": 5, "cpu_limit": 3                   (tighter wall / CPU seconds for one case)
     "xfail": "the known bug"}                      (strict: the case fails until it is fixed)

``hostile-live-<name>/`` cases are hostile *live dumps* for ``lnetgen diff``: they add
``"command": "diff"`` and ``"live": "live"`` (the ``--live`` path inside the case directory),
and run ``lnetgen diff sites/demo.yaml --live live``; ``file`` names the dump.

``tests/test_validate.py`` only picks up case directories with an ``expected.txt``, so these
are this module's alone.  Inputs too big to commit, or that need a FIFO, a device or a link to
one, are built at run time by ``RUNTIME`` below.

For every input, ``lnetgen validate`` and ``lnetgen generate --out DIR`` (or ``lnetgen diff``)
must:

* exit with the expected status (validate, diff) or 1/2 (generate);
* print a diagnostic ``file:line:col: error[CODE] $.path: message`` naming the file, the line
  (or no line when ``no_line`` says why) and the expected code and text;
* print no Python traceback and at most ``MAX_OUTPUT`` bytes;
* write nothing: DIR does not exist afterwards and no temporary directory is left beside it;
* finish within ``WALL_TIMEOUT`` seconds of wall time and ``CPU_LIMIT`` seconds of CPU, in an
  address space capped at 2 GiB (``RLIMIT_AS``).

Each command runs in its own process.  Starting Python and importing lnetgen costs ~0.4 s of CPU,
which would dominate this suite (~200 commands), so the commands are run by *runner* processes
that import lnetgen once and ``fork()`` a child per command.  The child applies the resource
limits, points stdin at /dev/null and stdout/stderr at files, and runs ``python -m lnetgen``'s
module with ``runpy`` exactly as the interpreter would, including the interpreter's handling of
``SystemExit`` and of uncaught exceptions (traceback on stderr, status 1).  A crash (segfault) or
a kill by a limit shows up as a negative status.  ``test_runner_matches_real_cli`` checks that
the runner and a plain ``python -m lnetgen`` subprocess (limits set by ``preexec_fn``) agree.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import CASES, ROOT

#: Address-space cap of every command (bytes).
MAX_AS = 2 * 1024**3
#: CPU seconds a command may use; a normal case needs well under one.
CPU_LIMIT = 60
#: Wall seconds before a command counts as hung (generous: CI machines are loaded).
WALL_TIMEOUT = 120.0
#: Most bytes of stdout + stderr one refused input may produce.
MAX_OUTPUT = 8 * 1024

INVALID = CASES / "invalid"
#: The plan ``lnetgen diff`` compares the hostile live dumps with.
DIFF_SITE = ROOT / "sites" / "demo.yaml"
HOSTILE = sorted(p.name for p in INVALID.iterdir() if p.name.startswith("hostile-"))

#: ``path:line:col: severity[CODE] $.json.path: message`` (``path: severity[...]`` without line)
DIAG = re.compile(
    r"^(?P<file>.+?)(?::(?P<line>\d+):(?P<col>\d+))?: (?P<sev>error|warning)"
    r"\[(?P<code>[A-Z0-9-]+)\] (?P<path>\$\S*): (?P<msg>.*)$"
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONHASHSEED", None)
    return env


def _limits() -> None:
    """``preexec_fn`` of a plain subprocess: the same caps as the runner's children."""
    resource.setrlimit(resource.RLIMIT_AS, (MAX_AS, MAX_AS))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


# ----------------------------------------------------------------------------- the runner

_RUNNER = r"""
import json, os, resource, runpy, signal, sys, time, traceback

import lnetgen.api, lnetgen.cli, lnetgen.inventory  # the imports every child shares

MAX_AS = int(sys.argv[1])


def child(req):
    code = 1
    try:
        os.chdir(req["cwd"])
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        for target, name in ((1, "stdout"), (2, "stderr")):
            fd = os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, target)
        resource.setrlimit(resource.RLIMIT_AS, (MAX_AS, MAX_AS))
        resource.setrlimit(resource.RLIMIT_CPU, (req["cpu"], req["cpu"]))
        script = req.get("script")
        sys.argv = [script or "lnetgen", *req["args"]]
        try:
            if script:  # the harness's own self-test
                runpy.run_path(script, run_name="__main__")
            else:
                runpy.run_module("lnetgen", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:  # what the interpreter does with it
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


for line in sys.stdin:
    req = json.loads(line)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child(req)
    timed_out = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > req["timeout"]:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            timed_out = True
            break
        time.sleep(0.005)
    reply = {"rc": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
             "seconds": time.monotonic() - start}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    rc: int
    timed_out: bool
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def describe(self) -> str:
        tail = self.output[-3000:]
        return f"lnetgen {' '.join(self.args)} -> {self.rc} (timed out: {self.timed_out})\n{tail}"


class Runner:
    """One pre-imported lnetgen process that forks a limited child per command."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.count = 0
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _RUNNER, str(MAX_AS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env=_env(),
            text=True,
        )

    def run(
        self,
        args: list[str],
        cwd: Path,
        timeout: float = WALL_TIMEOUT,
        script: str = "",
        cpu: int = CPU_LIMIT,
    ) -> Result:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.count += 1
        out = self.scratch / f"{self.count}.out"
        err = self.scratch / f"{self.count}.err"
        req = {"args": args, "cwd": str(cwd), "timeout": timeout, "script": script, "cpu": cpu}
        req.update(stdout=str(out), stderr=str(err))
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        return Result(
            tuple(args),
            reply["rc"],
            reply["timed_out"],
            out.read_text(encoding="utf-8", errors="replace"),
            err.read_text(encoding="utf-8", errors="replace"),
        )

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Pool:
    """Runners on as many threads as there are CPUs; ``submit`` returns a future."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.local = threading.local()
        self.runners: list[Runner] = []
        self.lock = threading.Lock()
        self.executor = cf.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))

    def _runner(self) -> Runner:
        runner: Runner | None = getattr(self.local, "runner", None)
        if runner is None:
            with self.lock:
                scratch = self.scratch / f"runner{len(self.runners)}"
                scratch.mkdir()
                runner = Runner(scratch)
                self.runners.append(runner)
            self.local.runner = runner
        return runner

    def submit(self, fn: Callable[[Runner], Any]) -> cf.Future[Any]:
        return self.executor.submit(lambda: fn(self._runner()))

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        for r in self.runners:
            r.close()


# ----------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str
    target: Path  # the inventory (or, for diff, the --live path), relative to cwd if possible
    cwd: Path
    expect: dict[str, Any]

    @property
    def command(self) -> str:
        return str(self.expect.get("command", "validate"))


@dataclass(frozen=True)
class Outcome:
    case: Case
    validate: Result
    generate: Result | None
    out_dir: Path


def _run_case(case: Case, runner: Runner, *, work: Path) -> Outcome:
    timeout = float(case.expect.get("timeout", WALL_TIMEOUT))
    cpu = int(case.expect.get("cpu_limit", CPU_LIMIT))
    parent = work / case.name
    parent.mkdir(parents=True, exist_ok=True)
    out_dir = parent / "out"
    if case.command == "diff":
        args = ["diff", str(DIFF_SITE), "--live", str(case.target)]
        return Outcome(case, runner.run(args, case.cwd, timeout, cpu=cpu), None, out_dir)
    v = runner.run(["validate", str(case.target)], case.cwd, timeout, cpu=cpu)
    args = ["generate", str(case.target), "--out", str(out_dir)]
    g = runner.run(args, case.cwd, timeout, cpu=cpu)
    return Outcome(case, v, g, out_dir)


def _corpus_case(name: str) -> Case:
    d = INVALID / name
    expect = json.loads((d / "expect.json").read_text(encoding="utf-8"))
    return Case(name, Path(expect.get("live", "site.yaml")), d, expect)


def _params() -> Iterator[Any]:
    for name in HOSTILE:
        expect = json.loads((INVALID / name / "expect.json").read_text(encoding="utf-8"))
        marks = []
        if "xfail" in expect:
            marks.append(pytest.mark.xfail(strict=True, reason=expect["xfail"]))
        yield pytest.param(name, marks=marks, id=name)


@pytest.fixture(scope="module")
def pool() -> Iterator[Pool]:
    with tempfile.TemporaryDirectory(prefix="lnetgen-hostile-") as tmp:
        p = Pool(Path(tmp))
        try:
            yield p
        finally:
            p.close()


@pytest.fixture(scope="module")
def corpus(pool: Pool) -> Iterator[dict[str, cf.Future[Outcome]]]:
    """Start every corpus case at once; each test waits for its own."""
    with tempfile.TemporaryDirectory(prefix="lnetgen-hostile-out-") as tmp:
        work = Path(tmp)
        futures = {
            name: pool.submit(partial(_run_case, _corpus_case(name), work=work)) for name in HOSTILE
        }
        yield futures
        for f in futures.values():
            f.result()


def _code_ok(expected: str, got: str) -> bool:
    """``E-LIVE-`` (ending in ``-``) accepts any code of that family."""
    return got.startswith(expected) if expected.endswith("-") else got == expected


def _find_diag(output: str, file: str, code: str, line: int | None, text: str) -> bool:
    for ln in output.splitlines():
        m = DIAG.match(ln.strip())
        if not m or not _code_ok(code, m["code"]) or text not in m["msg"]:
            continue
        if os.path.basename(m["file"]) != file:
            continue
        if line is None and m["line"] is None:
            return True
        if line is not None and m["line"] is not None and int(m["line"]) == line:
            return True
    return False


def _check(outcome: Outcome) -> None:
    case, v, g = outcome.case, outcome.validate, outcome.generate
    e = case.expect
    file = e.get("file", case.target.name)
    assert set(e) >= {"exit", "code", "line", "message_contains"}, e
    exits = e["exit"] if isinstance(e["exit"], list) else [e["exit"]]
    assert set(exits) <= {1, 2}
    if e["line"] is None:
        assert e.get("no_line"), "a case without a line must say why no line can be given"
    for r in (v, g):
        if r is None:
            continue
        assert not r.timed_out, "did not finish in time: " + r.describe()
        assert r.rc >= 0, "killed by a signal or a resource limit: " + r.describe()
        assert "Traceback (most recent call last)" not in r.output, r.describe()
        assert len(r.output.encode()) <= MAX_OUTPUT, (
            f"{len(r.output.encode())} bytes of output for one refused input: " + r.describe()[:600]
        )
    assert v.rc in exits, v.describe()
    assert _find_diag(v.output, file, e["code"], e["line"], e["message_contains"]), (
        f"no {file}:{e['line']}: error[{e['code']}] ...{e['message_contains']}... in\n"
        + v.describe()
    )
    if g is not None:
        assert g.rc == e.get("generate_exit", g.rc) and g.rc in (1, 2), g.describe()
        if "generate_message" in e:
            assert e["generate_message"] in g.output and file in g.output, g.describe()
        else:
            assert _find_diag(g.output, file, e["code"], e["line"], e["message_contains"]), (
                g.describe()
            )
        assert not os.path.lexists(outcome.out_dir), f"generate wrote {outcome.out_dir}"
        left = sorted(os.listdir(outcome.out_dir.parent))
        assert left == [], f"generate left {left} beside the output directory"


@pytest.mark.parametrize("name", list(_params()))
def test_hostile_case(name: str, corpus: dict[str, cf.Future[Outcome]]) -> None:
    _check(corpus[name].result())


def test_corpus_is_large_and_well_formed() -> None:
    assert len(HOSTILE) >= 40
    for name in HOSTILE:
        d = INVALID / name
        e = json.loads((d / "expect.json").read_text(encoding="utf-8"))
        assert os.path.lexists(d / e.get("live", "site.yaml")), name
        assert isinstance(e["exit"], int) and e["code"].startswith("E-"), name
        assert e["line"] is None or (isinstance(e["line"], int) and e["line"] >= 1), name
        assert isinstance(e["message_contains"], str) and e["message_contains"], name


# ----------------------------------------------------------------------------- built at run time

_MINI = (INVALID / "hostile-name-semicolon" / "site.yaml").read_text(encoding="utf-8")
_MINI = _MINI.replace("'rtr01;reboot'", "rtr01")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _huge_file(d: Path) -> Path:
    """A 100 MB inventory: the small site, then 100 MB of comment lines."""
    path = _write(d / "site.yaml", _MINI)
    line = "# " + "padding " * 12 + "\n"
    block = line * (1024 * 1024 // len(line) + 1)
    with open(path, "a", encoding="utf-8") as fh:
        for _ in range(100):
            fh.write(block)
    assert path.stat().st_size > 100 * 1024 * 1024
    return path


def _alias_bomb(d: Path) -> Path:
    """Billion laughs: nine levels of nine aliases, 9^9 strings from a 700-byte file."""
    text = '# billion laughs\nl0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for k in range(1, 10):
        text += f"l{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 9) + "]\n"
    return _write(d / "site.yaml", text)


def _deep_nesting(d: Path) -> Path:
    """200 000 nested brackets: a recursive parser overflows the C stack on this."""
    return _write(d / "site.yaml", "site: mini\ndescription: " + "[" * 200_000 + "]" * 200_000)


def _fifo(d: Path) -> Path:
    """site.yaml is a named pipe nobody writes to: open() would wait forever."""
    d.mkdir(parents=True, exist_ok=True)
    os.mkfifo(d / "site.yaml")
    return d / "site.yaml"


def _csv_fifo(d: Path) -> Path:
    text = _MINI.replace(
        "coordinates: {rule: linear, order: xyz, skip_routers: true}",
        "coordinates: {csv: coords.csv}",
    )
    d.mkdir(parents=True, exist_ok=True)
    os.mkfifo(d / "coords.csv")
    return _write(d / "site.yaml", text)


def _dev_zero(_d: Path) -> Path:
    """A character device that never ends: only the size limit stops the read."""
    return Path("/dev/zero")


_EXPORT = (
    "net:\n    - net type: gni\n      local NI(s):\n        - interfaces:\n"
    "              0: ipogif0\nroute:\n    - net: o2ib100\n      gateway: 201@gni\n"
    "      hop: 1\n      priority: 0\n"
)


def _live_huge(d: Path) -> Path:
    """A live directory whose one dump is 100 MB."""
    path = _write(d / "live" / "rtr01.yaml", _EXPORT)
    block = ("# " + "padding " * 12 + "\n") * 10_000
    with open(path, "a", encoding="utf-8") as fh:
        while fh.tell() < 100 * 1024 * 1024:
            fh.write(block)
    return d / "live"


def _live_fifo(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    os.mkfifo(d / "rtr01.yaml")
    return d / "rtr01.yaml"


def _live_deep(d: Path) -> Path:
    return _write(
        d / "live" / "rtr01.yaml", "route: " + "[" * 200_000 + "]" * 200_000 + "\n"
    ).parent


def _live_manifest_dev_zero(d: Path) -> Path:
    """A generated-tree look-alike whose one listed dump is a symlink to /dev/zero (built here:
    a committed link to a device would hang tools that read the source tree)."""
    entry = {"path": "lnetctl/x.yaml", "format": "lnetctl", "hosts": "rtr01"}
    _write(d / "live" / "manifest.json", json.dumps({"files": [entry]}))
    (d / "live" / "lnetctl").mkdir()
    os.symlink("/dev/zero", d / "live" / "lnetctl" / "x.yaml")
    return d / "live"


#: name -> (builder, expect); the builder writes the input into a fresh directory.
RUNTIME: dict[str, tuple[Callable[[Path], Path], dict[str, Any]]] = {
    "file-100mb": (
        _huge_file,
        {
            "exit": 1,
            "code": "E-FILE-SIZE",
            "line": None,
            "message_contains": "limit",
            "no_line": "the file is refused by its size before it is read",
        },
    ),
    "alias-bomb": (
        _alias_bomb,
        {"exit": 1, "code": "E-YAML-SIZE", "line": 2, "message_contains": "alias bomb"},
    ),
    "deep-nesting-200k": (
        _deep_nesting,
        {"exit": 1, "code": "E-YAML-DEPTH", "line": 2, "message_contains": "nested"},
    ),
    "dev-zero": (
        _dev_zero,
        {
            "exit": 2,
            "code": "E-FILE",
            "line": None,
            "message_contains": "device",
            "no_line": "a device is refused before it is read, as a usage error (exit 2)",
        },
    ),
    "fifo-inventory": (
        _fifo,
        {
            "exit": 2,
            "code": "E-FILE",
            "line": None,
            "message_contains": "named pipe",
            "no_line": "a named pipe is refused before it is read, as a usage error (exit 2)",
            "timeout": 30,
        },
    ),
    "fifo-coordinates-csv": (
        _csv_fifo,
        {
            "exit": 1,
            "code": "E-TORUS-CSV",
            "line": 20,
            "message_contains": "named pipe",
            "timeout": 30,
        },
    ),
    "live-100mb": (
        _live_huge,
        {
            "command": "diff",
            "exit": 1,
            "code": "E-LIVE-SIZE",
            "line": None,
            "message_contains": "limit",
            "file": "rtr01.yaml",
            "no_line": "the dump is refused by its size before it is read",
        },
    ),
    "live-deep-nesting-200k": (
        _live_deep,
        {
            "command": "diff",
            "exit": 1,
            "code": "E-LIVE-PARSE",
            "line": 1,
            "message_contains": "deep",
            "file": "rtr01.yaml",
        },
    ),
    "live-fifo": (
        _live_fifo,
        {
            "command": "diff",
            "exit": [1, 2],
            "code": "E-LIVE-",
            "line": None,
            "message_contains": "",
            "file": "rtr01.yaml",
            "no_line": "a named pipe is refused before it is read",
            "timeout": 5,
        },
    ),
    "live-manifest-symlink-dev-zero": (
        _live_manifest_dev_zero,
        {
            "command": "diff",
            "exit": [1, 2],
            "code": "E-LIVE-",
            "line": None,
            "message_contains": "",
            "file": "x.yaml",
            "no_line": "a device is refused before it is read",
            "cpu_limit": 3,
        },
    ),
    "live-dev-zero": (
        _dev_zero,
        {
            "command": "diff",
            "exit": [1, 2],
            "code": "E-LIVE-",
            "line": None,
            "message_contains": "",
            "file": "zero",
            "no_line": "a device is refused before it is read",
            "cpu_limit": 3,
        },
    ),
}


def _runtime_params() -> Iterator[Any]:
    for name, (_build, expect) in RUNTIME.items():
        marks = []
        if "xfail" in expect:
            marks.append(pytest.mark.xfail(strict=True, reason=expect["xfail"]))
        yield pytest.param(name, marks=marks, id=name)


@pytest.fixture(scope="module")
def runtime(pool: Pool) -> Iterator[dict[str, cf.Future[Outcome]]]:
    with tempfile.TemporaryDirectory(prefix="lnetgen-hostile-rt-") as tmp:
        work = Path(tmp)
        futures = {}
        for name, (build, expect) in RUNTIME.items():
            d = work / "in" / name
            site = build(d)
            cwd = site.parent if site.parent == d else d
            rel = Path(site.name) if site.parent == d else site
            d.mkdir(parents=True, exist_ok=True)
            case = Case(name, rel, cwd, expect)
            futures[name] = pool.submit(partial(_run_case, case, work=work / "out"))
        yield futures
        for f in futures.values():
            f.result()


@pytest.mark.parametrize("name", list(_runtime_params()))
def test_runtime_case(name: str, runtime: dict[str, cf.Future[Outcome]]) -> None:
    _check(runtime[name].result())


# ----------------------------------------------------------------------------- the harness


@pytest.mark.parametrize(
    "name, command",
    [("hostile-name-semicolon", "validate"), ("hostile-file-directory", "generate")],
)
def test_runner_matches_real_cli(name: str, command: str, pool: Pool, tmp_path: Path) -> None:
    """The forking runner gives what a plain ``python -m lnetgen`` subprocess gives."""
    case = _corpus_case(name)
    args = [command, "site.yaml"] + (
        ["--out", str(tmp_path / "out")] if command == "generate" else []
    )
    real = subprocess.run(
        [sys.executable, "-m", "lnetgen", *args],
        cwd=case.cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=WALL_TIMEOUT,
        preexec_fn=_limits,
        check=False,
    )
    forked = pool.submit(lambda r: r.run(args, case.cwd)).result()
    assert (forked.rc, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


def test_runner_sees_tracebacks_crashes_and_hangs(pool: Pool, tmp_path: Path) -> None:
    """The harness itself: what the checks above look for is really visible."""
    probe = _write(
        tmp_path / "probe.py",
        "import os, signal, sys\n"
        "mode = sys.argv[1]\n"
        "print('started')\n"
        "if mode == 'raise': raise ValueError('boom')\n"
        "if mode == 'crash': os.kill(os.getpid(), signal.SIGSEGV)\n"
        "if mode == 'hang': signal.pause()\n"
        "if mode == 'memory': bytearray(3 * 1024**3)\n"
        "sys.exit(3)\n",
    )

    def run(mode: str, timeout: float = WALL_TIMEOUT) -> Result:
        result: Result = pool.submit(
            lambda r: r.run([mode], tmp_path, timeout, str(probe))
        ).result()
        return result

    ok = run("exit")
    assert (ok.rc, ok.stdout, ok.timed_out) == (3, "started\n", False)
    raised = run("raise")
    assert raised.rc == 1 and "Traceback (most recent call last)" in raised.stderr
    assert "ValueError: boom" in raised.stderr
    assert run("crash").rc == -11
    memory = run("memory")
    assert memory.rc == 1 and "MemoryError" in memory.stderr
    assert run("hang", timeout=0.5).timed_out
