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

# Every shipped site.  Nearest-neighbor on Blue Waters and Spider is the slow pair (one route
# table per client: 8,485 and 17,429 lnetctl files, about a minute each to generate, write and
# prove on a 2-core machine); the other 18 take 1-4 s each.
SITES = sorted(p.stem for p in (ROOT / "sites").glob("*.yaml"))


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize("site", SITES)
def test_generated_site_is_proved(site: str, strategy: str, tmp_path: Path) -> None:
    gen = generate(str(ROOT / "sites" / f"{site}.yaml"), strategy, "lnetctl")
    write_output(gen, str(tmp_path / "out"))
    result = verify(str(tmp_path / "out"))
    assert not result.errors, [d.format() for d in result.errors[:10]]
    assert all(c.pairs for fs in result.counts.values() for c in fs.values())
