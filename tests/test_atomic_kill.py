"""``lnetgen generate`` killed at any moment leaves the old tree or the new one, never a mix.

The output directory starts as the tree of one strategy; each run asks for the other strategy's
tree and is SIGKILLed at a random moment (``random.Random(SEED)``):

* a third of the kills fall anywhere in the run (start-up, solve, render, write);
* the others wait until the run creates its temporary directory beside the output (the write
  phase has begun) and then a random part of the measured write time, so most of them land
  while files are being written, linked or swapped.

After every kill the directory must hold exactly the old tree or exactly the new one, compared
byte for byte with known-good trees of both strategies.  At the end a normal run must succeed,
leave exactly its tree, and remove every ``.<name>.lnetgen-*`` temporary directory the killed
runs left beside the output.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import ROOT

from lnetgen.api import generate, write_output

SEED = 20240611
TIMEOUT = 300.0


@dataclass(frozen=True)
class Scenario:
    site: str
    strategies: tuple[str, str]
    formats: str | None
    kills: int


SCENARIOS = [
    Scenario("demo", ("groups", "round-robin"), None, 8),
    Scenario("spider", ("projection", "groups"), "lnetctl", 7),
]


@dataclass
class Log:
    outcomes: list[str] = field(default_factory=list)


def _tree(root: Path) -> dict[str, bytes]:
    files = (p for p in sorted(root.rglob("*")) if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def _known_good(sc: Scenario, strategy: str, scratch: Path) -> tuple[dict[str, bytes], float]:
    """The tree a complete run writes, and how long writing it takes here."""
    gen = generate(str(ROOT / "sites" / f"{sc.site}.yaml"), strategy, sc.formats)
    start = time.monotonic()
    write_output(gen, str(scratch / strategy))
    return _tree(scratch / strategy), time.monotonic() - start


def _command(sc: Scenario, strategy: str, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "lnetgen", "generate", f"sites/{sc.site}.yaml"]
    cmd += ["-s", strategy, "--out", str(out)]
    if sc.formats:
        cmd += ["--formats", sc.formats]
    return cmd


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _temporaries(parent: Path, out: Path) -> set[str]:
    prefix = f".{out.name}.lnetgen-"
    return {n for n in os.listdir(parent) if n.startswith(prefix)}


def _run(sc: Scenario, strategy: str, out: Path) -> tuple[float, float]:
    """A complete run; returns its wall time and the time its temporary tree existed (its
    write phase, as a killed run meets it: files are rendered and written into it, then it is
    swapped in).  Interpreter start-up and exit are left out, so the kills aimed at the write
    phase land in it, however fast writing gets."""
    before = _temporaries(out.parent, out) if out.parent.exists() else set()
    start = time.monotonic()
    proc = subprocess.Popen(
        _command(sc, strategy, out),
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = gone = None
    while proc.poll() is None:
        new = out.parent.exists() and bool(_temporaries(out.parent, out) - before)
        if seen is None and new:
            seen = time.monotonic()
        elif seen is not None and gone is None and not new:
            gone = time.monotonic()
        time.sleep(0.0005)
    end = time.monotonic()
    if seen is not None and gone is not None:
        return end - start, gone - seen
    output = proc.stdout.read() if proc.stdout else ""
    if proc.stdout:
        proc.stdout.close()
    assert proc.returncode == 0, output
    return end - start, end - (seen if seen is not None else start)


def _killed_run(
    sc: Scenario, strategy: str, out: Path, rng: random.Random, full: float, write: float
) -> str:
    """Start a run and SIGKILL it at a random moment; say where the kill landed."""
    before = _temporaries(out.parent, out)
    during_write = rng.random() < 2 / 3
    delay = rng.uniform(0, 1.2 * write) if during_write else rng.uniform(0, full)
    proc = subprocess.Popen(
        _command(sc, strategy, out),
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + TIMEOUT
    try:
        if during_write:
            while not (_temporaries(out.parent, out) - before) and proc.poll() is None:
                assert time.monotonic() < deadline, "the run never started writing"
                time.sleep(0.0005)
        time.sleep(delay)
        finished = proc.poll() is not None
        if not finished:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if finished:
        assert proc.returncode == 0
        return "finished"
    mid_write = bool(_temporaries(out.parent, out) - before)
    return "killed while writing" if mid_write else "killed before writing"


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.site for s in SCENARIOS])
def test_killed_generate_leaves_old_or_new_tree(sc: Scenario, tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}-{sc.site}")
    a, b = sc.strategies
    known: dict[str, dict[str, bytes]] = {}
    write = 0.0
    for s in sc.strategies:
        known[s], seconds = _known_good(sc, s, tmp_path / "known")
        write = max(write, seconds)
    assert known[a] != known[b], "the two strategies must give different trees"

    parent = tmp_path / "site"
    parent.mkdir()
    out = parent / "out"
    full, _ = _run(sc, a, out)
    assert _tree(out) == known[a], "the command line and the library disagree"
    # the write phase as the killed runs meet it: replacing the other strategy's tree (it
    # includes checking the old tree against its manifest), measured on this machine now
    _, replacing = _run(sc, b, out)
    _, back = _run(sc, a, out)
    write = min(write, replacing, back) if min(replacing, back) > 0 else write
    current = a
    log = Log()
    for _ in range(sc.kills):
        target = b if current == a else a
        where = _killed_run(sc, target, out, rng, full, write)
        log.outcomes.append(where)
        got = _tree(out)
        if got == known[current]:
            pass
        elif got == known[target]:
            current = target
        else:
            old, new = known[current], known[target]
            mixed = sorted(
                rel
                for rel in set(got) | set(old) | set(new)
                if got.get(rel) not in (old.get(rel), new.get(rel))
                or (rel in got) != (rel in old or rel in new)
            )
            pytest.fail(
                f"after a kill ({where}) {out} is neither the {current} tree nor the {target} "
                f"tree: {len(got)} files, e.g. {mixed[:5]}; kills so far: {log.outcomes}"
            )
        assert out.is_dir()
    # the kills exercised the write phase at least once
    assert "killed while writing" in log.outcomes, log.outcomes

    final = b if current == a else a
    _run(sc, final, out)
    assert _tree(out) == known[final]
    assert _temporaries(parent, out) == set(), "temporary directories left after a good run"
    assert sorted(os.listdir(parent)) == ["out"]
