"""``verify`` checks that targets list the failover partners they need (``V-FAILOVER-NIDS``):
a target's ``--servicenode`` names its server and the partner, its ``--mgsnode`` the MGS and the
MGS's partner, and the mount NIDs both MGS nodes -- located at the ``mkfs`` line (or
``mgs_nids``) of the manifest."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from lnetgen import api
from lnetgen.diagnostics import Diagnostic
from lnetgen.verify import verify

SITE = ROOT / "tests/data/verify_failover_site.yaml"
CODE = "V-FAILOVER-NIDS"
OSS05 = "10.10.1.5@o2ib31,10.10.1.5@o2ib"  # home-OST0000..3 live on oss05
OSS06 = "10.10.1.6@o2ib32,10.10.1.6@o2ib"  # its failover partner
MGS02 = "10.10.1.22@o2ib17,10.10.1.22@o2ib"  # the failover partner of the MGS mgs01


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ferro") / "out"
    api.write_output(api.generate(str(SITE), "projection"), str(out))
    return out


@pytest.fixture
def tree(generated: Path, tmp_path: Path) -> Path:
    t = tmp_path / "t"
    shutil.copytree(generated, t)
    return t


def edit_manifest(tree: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = tree / "manifest.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def target(doc: dict[str, Any], name: str) -> dict[str, Any]:
    fs = name.split("-", 1)[0]
    for s in doc["filesystems"][fs]["servers"]:
        for t in s["targets"]:
            if t["name"] == name:
                return t  # type: ignore[no-any-return]
    raise AssertionError(name)


def edit_mkfs(tree: Path, name: str, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in the mkfs line of target ``name``; the new line."""
    got: list[str] = []

    def change(doc: dict[str, Any]) -> None:
        t = target(doc, name)
        assert old in t["mkfs"], (old, t["mkfs"])
        t["mkfs"] = t["mkfs"].replace(old, new)
        got.append(t["mkfs"])

    edit_manifest(tree, change)
    return got[0]


def line_of(tree: Path, text: str) -> int:
    lines = (tree / "manifest.json").read_text().split("\n")
    return next(n for n, ln in enumerate(lines, 1) if text in ln)


def failover(tree: Path) -> list[Diagnostic]:
    return [d for d in verify(str(tree)).findings if d.code == CODE]


def test_generated_tree_lists_every_partner(generated: Path) -> None:
    assert verify(str(generated)).exit_code == 0


def test_servicenode_without_the_partner(tree: Path) -> None:
    """home-OST0000 fails over to oss06, but its --servicenode no longer names oss06: clients
    never learn where it went after a failover."""
    mkfs = edit_mkfs(tree, "home-OST0000", f" --servicenode={OSS06}", "")
    [d] = failover(tree)
    assert d.severity == "error" and d.file.endswith("manifest.json")
    assert d.line == line_of(tree, json.dumps(mkfs)) and d.path.endswith(".targets[0].mkfs")
    assert "home-OST0000" in d.message and "no NID of oss06" in d.message


def test_servicenode_without_the_primary(tree: Path) -> None:
    """With --servicenode every server is listed, the primary too."""
    edit_mkfs(tree, "home-OST0001", f" --servicenode={OSS05}", "")
    [d] = failover(tree)
    assert "home-OST0001" in d.message and "no NID of oss05" in d.message


def test_mgsnode_without_the_mgs_partner(tree: Path) -> None:
    """home-OST0001 can register only while mgs01 runs the MGS."""
    edit_mkfs(tree, "home-OST0001", f" --mgsnode={MGS02}", "")
    [d] = failover(tree)
    assert "home-OST0001" in d.message and "no NID of mgs02" in d.message
    assert "runs the MGS" in d.message


def test_mount_without_the_mgs_partner(tree: Path) -> None:
    """Mount NIDs and mount spec agree (no V-MOUNT-SPEC), but leave out the MGS's partner."""

    def change(doc: dict[str, Any]) -> None:
        fs = doc["filesystems"]["scratch"]
        fs["mgs_nids"] = fs["mgs_nids"][:1]
        fs["mount"] = f"{fs['mgs_nids'][0]}:/scratch"

    edit_manifest(tree, change)
    res = verify(str(tree))
    assert "V-MOUNT-SPEC" not in {d.code for d in res.findings}
    [d] = [d for d in res.findings if d.code == CODE]
    assert d.path == "$.filesystems.scratch.mgs_nids" and d.line > 0
    assert "no NID of mgs02" in d.message and "cannot mount" in d.message


def test_failnode_names_the_partner_only(tree: Path) -> None:
    """--failnode lists the failover nodes, the formatting node implied: enough; a target
    with neither option while its server has a partner is not."""
    edit_mkfs(
        tree, "home-OST0000", f"--servicenode={OSS05} --servicenode={OSS06}", f"--failnode={OSS06}"
    )
    assert failover(tree) == []
    edit_mkfs(tree, "home-OST0000", f" --failnode={OSS06}", "")
    [d] = failover(tree)
    assert "no --servicenode or --failnode option naming oss06" in d.message
