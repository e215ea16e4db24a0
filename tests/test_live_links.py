"""No symbolic link below a directory given to ``verify`` or ``diff --live`` is followed out of
it: a linked dump, manifest or host_vars file that leads outside, and a linked directory
anywhere between the directory given and a file, are refused (``E-LIVE-LINK``) without being
read, so their content is never echoed; the directory named on the command line may itself be
a link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT

from lnetgen import api
from lnetgen.cli import main
from lnetgen.live import LiveParseError, read_live
from lnetgen.live import files as live_files
from lnetgen.live.files import read_bytes
from lnetgen.verify.locate import Locator

SITE = str(ROOT / "sites" / "demo.yaml")
SECRET = "hunter2-SECRET"


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gold") / "gold"
    api.write_output(api.generate(SITE), str(out))
    return out


@pytest.fixture
def tree(gold: Path, tmp_path: Path) -> Path:
    """A copy of the demo tree (``cp -a``: links kept) and ``tmp_path/outside``."""
    t = tmp_path / "tree"
    shutil.copytree(gold, t, symlinks=True)
    (tmp_path / "outside").mkdir()
    return t


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, ["verify", *args])


def diff(live: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["diff", SITE, "--live", str(live), *args])


def _secret_dump(path: Path) -> Path:
    path.write_text(f"net:\n    - net type: {SECRET}\n")
    return path


def _link_dir_out(tree: Path, sub: str, *, secret: str = "rtr02.yaml") -> Path:
    """``tree/sub`` replaced by a link to a copy outside the tree, one file of it a secret."""
    out = tree.parent / "outside" / sub.replace("/", "_")
    shutil.copytree(tree / sub, out)
    if secret:
        _secret_dump(out / secret)
    shutil.rmtree(tree / sub)
    (tree / sub).symlink_to(out, target_is_directory=True)
    return out


# ------------------------------------------------------------------ defect 1: verify, file


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_verify_refuses_a_dump_linked_out_of_the_tree(tree: Path, fmt: str) -> None:
    dump = tree / "lnetctl" / "rtr01.yaml"
    dump.unlink()
    dump.symlink_to(_secret_dump(tree.parent / "outside" / "secret.yaml"))
    res = verify(str(tree), "--format", fmt)
    assert res.exit_code == 1, res.output
    assert SECRET not in res.output and "Traceback" not in res.output
    assert "E-LIVE-LINK" in res.output and "rtr01.yaml" in res.output
    assert "E-LIVE-PARSE" not in res.output


def test_verify_follows_a_dump_link_inside_the_tree(tree: Path) -> None:
    dump = tree / "lnetctl" / "rtr01.yaml"
    dump.rename(tree / "lnetctl" / "rtr01.real")
    dump.symlink_to("rtr01.real")
    res = verify(str(tree))
    assert res.exit_code == 0, res.output


# ------------------------------------------------------- defect 2: linked subdirectories


def test_verify_refuses_a_linked_subdirectory(tree: Path) -> None:
    _link_dir_out(tree, "lnetctl")
    res = verify(str(tree))
    assert res.exit_code == 2, res.output  # no LNet file of the tree can be read
    assert SECRET not in res.output and "Traceback" not in res.output
    assert "E-LIVE-LINK" in res.output and "'lnetctl' is a symbolic link" in res.output
    assert "proved" not in res.output


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diff_live_refuses_a_linked_subdirectory(tree: Path, fmt: str) -> None:
    _link_dir_out(tree, "lnetctl")
    res = diff(tree, "--format", fmt)
    assert res.exit_code == 1, res.output
    assert SECRET not in res.output and "Traceback" not in res.output
    assert "E-LIVE-LINK" in res.output


def test_verify_live_refuses_a_linked_subdirectory(tree: Path, gold: Path) -> None:
    _link_dir_out(tree, "lnetctl")
    res = verify(str(gold), "--live", str(tree))
    assert res.exit_code == 1, res.output
    assert SECRET not in res.output and "E-LIVE-LINK" in res.output


def test_a_directory_link_inside_the_tree_is_refused_too(tree: Path) -> None:
    (tree / "lnetctl").rename(tree / "lnetctl.real")
    (tree / "lnetctl").symlink_to("lnetctl.real", target_is_directory=True)
    live = read_live(str(tree))
    assert live.hosts == {} and {d.code for d in live.errors} == {"E-LIVE-LINK"}
    assert verify(str(tree)).exit_code == 2


def test_a_linked_directory_deeper_down_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    _secret_dump(tmp_path / "elsewhere" / "x.yaml")
    (root / "a" / "b").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(LiveParseError) as err:
        read_bytes(str(root / "a" / "b" / "x.yaml"), str(root))
    d = err.value.diagnostic
    assert d.code == "E-LIVE-LINK" and "'a/b' is a symbolic link" in d.message
    assert SECRET not in d.message


# ------------------------------------------------------------- the root may be a link


def test_the_directory_named_may_itself_be_a_link(tree: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(tree, target_is_directory=True)
    assert verify(str(alias)).exit_code == 0
    assert diff(alias).exit_code == diff(tree).exit_code
    assert "E-LIVE-LINK" not in diff(alias).output


# ------------------------------------------------------------ other readers: manifests


def test_verify_refuses_a_manifest_linked_out(tree: Path) -> None:
    out = tree.parent / "outside" / "manifest.json"
    (tree / "manifest.json").rename(out)
    (tree / "manifest.json").symlink_to(out)
    res = verify(str(tree))
    assert res.exit_code == 2, res.output
    assert "E-LIVE-LINK" in res.output and "Traceback" not in res.output
    # a manifest named on the command line is the user's choice: it is followed
    assert verify(str(tree), "--manifest", str(tree / "manifest.json")).exit_code == 0


def test_diff_live_refuses_a_manifest_linked_out(tree: Path) -> None:
    out = tree.parent / "outside" / "manifest.json"
    doc = json.loads((tree / "manifest.json").read_text())
    doc["site"] = SECRET
    out.write_text(json.dumps(doc))
    (tree / "manifest.json").unlink()
    (tree / "manifest.json").symlink_to(out)
    for fmt in ("text", "json"):
        res = diff(tree, "--format", fmt)
        assert res.exit_code == 2, res.output
        assert "E-LIVE-LINK" in res.output and SECRET not in res.output


def test_a_dangling_manifest_link_is_refused_not_skipped(tree: Path) -> None:
    (tree / "manifest.json").unlink()
    (tree / "manifest.json").symlink_to(tree.parent / "nowhere")
    res = diff(tree)
    assert res.exit_code == 2 and "E-LIVE-LINK" in res.output, res.output


# ------------------------------------------------------- other readers: Ansible host_vars


@pytest.mark.parametrize("linked", ["file", "directory"])
def test_verify_refuses_host_vars_linked_out(tree: Path, linked: str) -> None:
    """rtr01's host_vars replaced by oss01's, outside the tree: read, it would claim oss01's
    NIDs (V-DUP-NID); it is refused instead."""
    hv = tree / "ansible" / "host_vars"
    if linked == "file":
        out = tree.parent / "outside" / "lnet.yml"
        shutil.copy(hv / "oss01" / "lnet.yml", out)
        (hv / "rtr01" / "lnet.yml").unlink()
        (hv / "rtr01" / "lnet.yml").symlink_to(out)
    else:
        _link_dir_out(tree, "ansible/host_vars", secret="")
        out = tree.parent / "outside" / "ansible_host_vars" / "rtr01" / "lnet.yml"
        shutil.copy(hv / "oss01" / "lnet.yml", out)
    res = verify(str(tree))
    assert "V-DUP-NID" not in res.output, res.output
    assert "V-NID-SOURCE" in res.output and "E-LIVE-LINK" in res.output
    assert "Traceback" not in res.output


# ----------------------------------------------------------------- other readers: Locator


def test_locator_reads_no_link_out_of_its_root(tree: Path) -> None:
    dump = tree / "lnetctl" / "rtr01.yaml"
    dump.unlink()
    dump.symlink_to(_secret_dump(tree.parent / "outside" / "secret.yaml"))
    assert Locator(str(tree)).lines(str(dump)) == []
    assert Locator(str(tree)).lines(str(tree / "lnetctl" / "rtr02.yaml")) != []


# ---------------------------------------------------------------- a link put in place late


def test_a_link_swapped_in_after_the_check_is_not_followed(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check and the open are one walk from a descriptor of the root, each name opened
    with O_NOFOLLOW: a link that appears between the check and the open is refused.  The
    check is made to see through links to stand for the race."""

    def late_mode(name: str, dir_fd: int) -> int:
        return os.stat(name, dir_fd=dir_fd).st_mode

    dump = tree / "lnetctl" / "rtr01.yaml"
    dump.unlink()
    dump.symlink_to(_secret_dump(tree.parent / "outside" / "secret.yaml"))
    monkeypatch.setattr(live_files, "_mode_at", late_mode)
    with pytest.raises(LiveParseError) as err:
        read_bytes(str(dump), str(tree))
    assert err.value.diagnostic.code == "E-LIVE-LINK"
    _link_dir_out(tree, "modprobe")
    with pytest.raises(LiveParseError) as err:
        read_bytes(str(tree / "modprobe" / "rtr01.conf"), str(tree))
    assert err.value.diagnostic.code == "E-LIVE-LINK"
