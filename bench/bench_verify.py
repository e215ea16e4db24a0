"""Benchmark ``lnetgen verify`` on Blue Waters' generated output, next to its floor.

Generates ``sites/bluewaters.yaml`` (25,712 clients written per class, 582 routers, 438
servers: about a thousand lnetctl files) into a temporary directory, then times, in the same
run:

1. the floor: reading and parsing the tree's per-host files with the live readers
   (``lnetgen.live.read_live`` on the directory), which any check of the files must do;
2. ``verify`` (manifest, files, NID index, every pair of every file system);
3. ``verify`` with the ping plan.

When the generated manifest has no ``filesystems`` section yet (trees of lnetgen versions
before servers shared a server net), the section is added with the test helper
``tests/verify_tree.py``, as the tests do: the product itself refuses such a manifest.

    python bench/bench_verify.py [--site FILE] [--strategy NAME] [--keep DIR]

(with lnetgen importable: installed, or ``PYTHONPATH=.`` from the repository root).  Wall and
CPU time are both printed: on a busy machine the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lnetgen import api
from lnetgen.live import read_live
from lnetgen.verify import KINDS, verify

HERE = Path(__file__).resolve().parent
DEFAULT_SITE = HERE.parent / "sites" / "bluewaters.yaml"


def timed(label: str, fn: Callable[[], Any]) -> Any:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:<40} {wall:7.2f} s wall  {cpu:7.2f} s CPU")
    return out


def ensure_filesystems(out: Path) -> None:
    if "filesystems" in json.loads((out / "manifest.json").read_text()):
        return
    sys.path.insert(0, str(HERE.parent / "tests"))
    from verify_tree import add_filesystems

    print("  (manifest without 'filesystems': added by tests/verify_tree.py)")
    add_filesystems(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", default=str(DEFAULT_SITE))
    ap.add_argument("--strategy", default=None)
    ap.add_argument("--keep", default=None, help="write the tree here and keep it")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(
        prefix="bench-verify-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
    )
    out = Path(args.keep) if args.keep else Path(tmp) / "out"
    try:
        print(f"site {args.site}")
        gen = timed("generate (not part of verify)", lambda: api.generate(args.site, args.strategy))
        api.write_output(gen, str(out))
        ensure_filesystems(out)
        nfiles = sum(1 for _ in (out / "lnetctl").iterdir())
        print(f"  {nfiles} lnetctl files, {len(gen.site.clients)} clients")
        live = timed("floor: read + parse the tree (read_live)", lambda: read_live(str(out)))
        print(f"    {len(live.hosts)} hosts read")
        res = timed("verify", lambda: verify(str(out)))
        timed("verify --ping-plan", lambda: verify(str(out), ping=True))
        for kind in KINDS:
            c = res.total(kind)
            print(f"    {kind:<22} {c.pairs:>8} pairs, {c.hold} hold, {c.fail} fail")
        print(f"    {len(res.errors)} error(s), {len(res.findings) - len(res.errors)} warning(s)")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
