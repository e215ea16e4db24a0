"""The package finds its templates and schemas however it is installed.

tox sets ``LNETGEN_EXPECT_WHEEL=1``: there the package under test must be the installed wheel
(not this checkout), with templates and schemas inside it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import lnetgen
from lnetgen.resources import data_dir, schema

ROOT = Path(__file__).resolve().parent.parent


def test_data_directories_are_found() -> None:
    assert (data_dir("templates") / "lnetctl.yaml.j2").is_file()
    assert (data_dir("templates") / "ansible").is_dir()
    assert schema("site.schema.json")["title"] == "lnetgen site inventory"
    assert schema("plan.schema.json")["title"].startswith("lnetgen routing plan")


@pytest.mark.skipif(os.environ.get("LNETGEN_EXPECT_WHEEL") != "1", reason="only under tox")
def test_tox_tests_the_installed_wheel() -> None:
    pkg = Path(lnetgen.__file__).resolve().parent
    # (tox's virtualenv lives inside the checkout, so compare with the source package itself)
    assert pkg != ROOT / "lnetgen", f"tests imported the checkout ({pkg}), not the wheel"
    assert "site-packages" in pkg.parts
    assert data_dir("templates") == pkg / "_data" / "templates"
    assert data_dir("schemas") == pkg / "_data" / "schemas"
