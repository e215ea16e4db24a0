"""The same inventory gives byte-identical output trees whatever the hash seed.

Each shipped site is generated with its default strategy and the default formats by
``python -m lnetgen generate`` in fresh interpreters under several ``PYTHONHASHSEED`` values
(0 switches hash randomisation off; the others permute every set and dict of strings
differently), and the trees are compared file by file, byte for byte.  The runs of one site go
in parallel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SEEDS = ["0", "1", "2718281828"]
SITES = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))
TIMEOUT = 600


def _tree(root: Path) -> dict[str, bytes]:
    files = (p for p in sorted(root.rglob("*")) if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


@pytest.mark.parametrize("site", SITES)
def test_output_does_not_depend_on_the_hash_seed(site: str, tmp_path: Path) -> None:
    procs = {}
    for seed in SEEDS:
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        out = tmp_path / f"seed-{seed}" / "out"  # own parent: generate locks the parent
        procs[seed] = subprocess.Popen(
            [sys.executable, "-m", "lnetgen", "generate", f"sites/{site}.yaml", "--out", str(out)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for seed, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, f"PYTHONHASHSEED={seed}: {stdout}{stderr}"
    trees = {seed: _tree(tmp_path / f"seed-{seed}" / "out") for seed in SEEDS}
    first = trees[SEEDS[0]]
    assert len(first) > 3 and "manifest.json" in first and "plan.json" in first
    for seed in SEEDS[1:]:
        other = trees[seed]
        assert sorted(other) == sorted(first), f"file sets differ under PYTHONHASHSEED={seed}"
        differ = [rel for rel in sorted(first) if first[rel] != other[rel]]
        assert not differ, (
            f"{len(differ)} file(s) differ between PYTHONHASHSEED={SEEDS[0]} and {seed}, "
            f"e.g. {differ[:5]}"
        )
