"""Shared test setup: which lnetgen is imported, golden-case helpers, hypothesis profile.

``LNETGEN_REGEN=1 pytest ...`` rewrites golden files (``expected.txt``) instead of comparing;
without it a mismatch fails and leaves ``<golden>.actual`` beside the golden file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

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
