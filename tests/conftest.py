"""Shared test setup: which lnetgen is imported, golden-case helpers, hypothesis profile.

``LNETGEN_REGEN=1 pytest ...`` rewrites golden files (``expected.txt``) instead of comparing;
without it a mismatch fails and leaves ``<golden>.actual`` beside the golden file.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
try:  # an installed lnetgen (tox installs the wheel) is the one under test
    import lnetgen  # noqa: F401
except ImportError:  # plain `pytest` in a checkout without an installed package
    sys.path.insert(0, str(ROOT))

CASES = Path(__file__).resolve().parent / "cases"

settings.register_profile(
    "lnetgen",
    deadline=None,  # CI machines vary; tests stay fast through small example counts
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(  # HYPOTHESIS_PROFILE=fuzz for a long hunt
    "fuzz", deadline=None, max_examples=5000, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "lnetgen"))


def regen() -> bool:
    """True when golden files should be rewritten rather than compared."""
    return os.environ.get("LNETGEN_REGEN", "") not in ("", "0")


@cache
def demo_next_pairing() -> Path:
    """The demo site with lnetgen 0.1's backup pairing (``groups.backup: next``).  The live
    dumps under ``fixtures/live/demo`` were taken from it; the demo now uses ``balanced``,
    which gives other routers the backup nets.  The diff and live-reader tests compare against
    the pairing the dumps were taken with."""
    where = Path(tempfile.mkdtemp(prefix="lnetgen-tests-"))
    atexit.register(shutil.rmtree, where, True)
    path = where / "demo.yaml"
    text = (ROOT / "sites" / "demo.yaml").read_text()
    assert text.count("backup: balanced") == 1
    path.write_text(text.replace("backup: balanced", "backup: next"))
    return path


@cache
def wolf_unrecorded() -> Path:
    """Wolf as LANL found it: its compute fabric with no OpenSM settings recorded (the shipped
    site records the fix ``fabric check`` measured, under which IO nodes sharing a port
    position are routed apart and ``W-IO-SAME-PORT`` is not reported)."""
    where = Path(tempfile.mkdtemp(prefix="lnetgen-tests-"))
    atexit.register(shutil.rmtree, where, True)
    path = where / "wolf.yaml"
    text = (ROOT / "sites" / "wolf.yaml").read_text()
    start = "    opensm: {io_guid_file: true, cn_guid_file: true, root_guid_file: true, "
    (line,) = [ln for ln in text.splitlines(keepends=True) if ln.startswith(start)]
    path.write_text(text.replace(line, ""))
    return path


def json_documents(
    keys: st.SearchStrategy[str] | None = None, max_leaves: int = 20
) -> st.SearchStrategy[object]:
    """Standard JSON values (no NaN or Infinity), nested in lists and objects whose keys are
    drawn from ``keys`` (default: any short text)."""
    key = st.text(max_size=4) if keys is None else keys
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(key, inner, max_size=4),
        max_leaves=max_leaves,
    )


@pytest.fixture(scope="module")
def demo_nn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site's lnetctl files, nearest-neighbor: a route table per client class, with
    routes at two priorities."""
    from lnetgen import api

    out = tmp_path_factory.mktemp("demo") / "out"
    api.write_output(
        api.generate(str(ROOT / "sites/demo.yaml"), "nearest-neighbor", "lnetctl"), str(out)
    )
    return out


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site as the current code generates it (for ``lnetgen verify``)."""
    from lnetgen import api

    out = tmp_path_factory.mktemp("demo") / "out"
    api.write_output(api.generate(str(ROOT / "sites/demo.yaml")), str(out))
    return out


@pytest.fixture
def tree(demo_out: Path, tmp_path: Path) -> Path:
    """A deployable demo tree: the contract's manifest sections and a shared server net
    (``verify_tree.add_filesystems``).  Modules with a tree of their own define ``tree``."""
    from verify_tree import add_filesystems

    t = tmp_path / "t"
    shutil.copytree(demo_out, t)
    add_filesystems(t)
    return t
