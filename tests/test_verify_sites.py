"""The whole, not the part: every shipped site x strategy, generated, passes ``lnetgen
verify`` — every client reaches every server and MGS of every file system, servers reach each
other, routes are symmetric, and the mount and mkfs NIDs are the right ones.

Only the lnetctl files (what ``verify`` reads) and the manifest are written, to keep this fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT

from lnetgen.api import generate, verify, write_output
from lnetgen.solve import strategy_names

# Blue Waters and Spider take minutes each to generate and prove on a 2-core machine: they are
# proved by bench/bench_verify.py, not here, so that the suite stays fast.
SITES = ["demo", "wolf"]


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize("site", SITES)
def test_generated_site_is_proved(site: str, strategy: str, tmp_path: Path) -> None:
    gen = generate(str(ROOT / "sites" / f"{site}.yaml"), strategy, "lnetctl")
    write_output(gen, str(tmp_path / "out"))
    result = verify(str(tmp_path / "out"))
    assert not result.errors, [d.format() for d in result.errors[:10]]
    assert all(c.pairs for fs in result.counts.values() for c in fs.values())
