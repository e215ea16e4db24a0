"""Every reader bounds its input while it reads (README, "Data safety").

Each case runs the real CLI in a subprocess under a 1 GiB address-space limit and must end in a
located error (exit 1 or 2, ``file:line``), never a traceback or a MemoryError.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

LIMIT = 1 << 30  # 1 GiB of address space
TIMEOUT = 240


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _lnetgen(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's BLAS reserves address space per thread
    return subprocess.run(
        [sys.executable, "-m", "lnetgen", *args],
        cwd=ROOT,
        env=env,
        preexec_fn=_cap,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _located(proc: subprocess.CompletedProcess[str], path: Path, code: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode in (1, 2), out[-2000:]
    assert "Traceback" not in out and "MemoryError" not in out, out[-2000:]
    assert f"{path}:" in out and code in out, out[-2000:]


def test_flat_list_is_refused_while_parsing(tmp_path: Path) -> None:
    """A 12 MB flat list (the issue's case) used 2.9 GB before the value limit was checked."""
    site = tmp_path / "flat.yaml"
    site.write_text("site: x\nrouters:\n" + "".join(f"  - r{i}\n" for i in range(1_000_000)))
    proc = _lnetgen("validate", str(site))
    _located(proc, site, "E-YAML-SIZE")
    # located at the first value over the limit: 5 values (mapping, site, x, routers, the
    # list) precede the items, so value 500,001 is item 499,996, on line 499,998
    assert f"{site}:499998:5:" in proc.stdout


def test_big_file_is_refused_before_reading(tmp_path: Path) -> None:
    site = tmp_path / "big.yaml"
    with open(site, "w") as fh:
        fh.write("site: x\ncomment: '")
        fh.write("x" * (33 << 20))
        fh.write("'\n")
    _located(_lnetgen("validate", str(site)), site, "E-FILE-SIZE")


@pytest.mark.parametrize("count", [480_000])
def test_largest_accepted_document_fits(tmp_path: Path, count: int) -> None:
    """Just under the value limit, the whole document is built and checked within 1 GiB."""
    site = tmp_path / "wide.yaml"
    site.write_text("site: x\nnotes:\n" + "".join(f"  - r{i}\n" for i in range(count)))
    proc = _lnetgen("validate", str(site))
    _located(proc, site, "E-SCHEMA")


def test_ibnetdiscover_from_a_device_is_refused() -> None:
    """``fabric import ibnetdiscover /dev/zero`` reached 2.6 GB in two seconds."""
    proc = _lnetgen("fabric", "import", "ibnetdiscover", "/dev/zero")
    _located(proc, Path("/dev/zero"), "E-FILE-BINARY")


@pytest.mark.parametrize(
    ("content", "code"),
    [(b"", "E-IBNET-EMPTY"), (b'Switch\t36 "S-\xe9"\n', "E-FILE-ENCODING"), (None, "E-FILE")],
    ids=["empty", "latin-1", "fifo"],
)
def test_ibnetdiscover_bad_inputs(tmp_path: Path, content: bytes | None, code: str) -> None:
    """An empty file exited 0 with ``switches: []``, a Latin-1 file ended in a
    UnicodeDecodeError traceback and a FIFO hung the command."""
    path = tmp_path / "fabric.txt"
    if content is None:
        os.mkfifo(path)
    else:
        path.write_bytes(content)
    proc = _lnetgen("fabric", "import", "ibnetdiscover", str(path))
    assert proc.returncode == 2
    _located(proc, path, code)


def _huge_torus(tmp_path: Path, side: int) -> Path:
    """12 clients in a ``side``^3 torus (the mini site of the invalid cases)."""
    text = (ROOT / "tests" / "cases" / "invalid" / "attach-no-leaf" / "site.yaml").read_text()
    text = text.replace("dims: [2, 2, 2]", f"dims: [{side}, {side}, {side}]")
    text = text.replace("default: groups", "default: projection")
    text = text.replace("{switch: core1, port: 3}", "{switch: core1, leaf: L02, port: 3}")
    site = tmp_path / "huge.yaml"
    site.write_text(text)
    return site


def test_validate_and_generate_scale_with_nodes_not_the_box(tmp_path: Path) -> None:
    """A 512^3 torus with 12 clients made validate use 4.1 GB (1024^3: an 8 GiB allocation).
    A box larger than the analyses model is an invalid inventory, located at its ``dims``, in
    every command; one just under the limit (125^3) is validated and generated from its nodes."""
    site = _huge_torus(tmp_path, 1024)
    for args in (["validate"], ["generate", "--out", str(tmp_path / "out")]):
        proc = _lnetgen(*args, str(site))
        _located(proc, site, "E-TORUS-SIZE")
        assert proc.returncode == 1
    site = _huge_torus(tmp_path, 125)
    proc = _lnetgen("validate", str(site))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _lnetgen("generate", str(site), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_analyze_of_a_huge_box_is_refused_not_allocated(tmp_path: Path) -> None:
    """``analyze`` of a 256^3 torus took 4.3 GB; link loads are dense, so their bound is
    checked before anything is allocated."""
    site = _huge_torus(tmp_path, 512)
    for args in (["analyze"], ["compare"], ["report", "--out", str(tmp_path / "r.html")]):
        proc = _lnetgen(*args, str(site))
        _located(proc, site, "E-TORUS-SIZE")
