"""Regression tests of review mends: the manifest of an old output tree is read by one reader
(``lnetgen.leftovers.read_listed``), once per swept temporary."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner

from lnetgen import leftovers, nodes
from lnetgen.cli import main
from lnetgen.live import LiveParseError, parse_dump


def _old_tree(tmp_path: Path, manifest: str | None = None) -> Path:
    """A swapped-out tree a killed run left: one owned file and a user's file."""
    old = tmp_path / ".out.lnetgen-k2x9_0ab"
    old.mkdir()
    (old / "a.conf").write_text("owned\n")
    (old / "NOTES.txt").write_text("mine\n")
    sha = hashlib.sha256(b"owned\n").hexdigest()
    if manifest is None:
        doc = {"files": [{"path": "a.conf", "sha256": sha}], "lnetgen_version": "1"}
        manifest = json.dumps(doc)
    (old / leftovers.MARKER).write_text(manifest)
    return old


def test_sweep_reads_an_old_manifest_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep read a swapped-out tree's manifest twice: once to tell it is lnetgen's, once
    to parse it."""
    old = _old_tree(tmp_path)
    opened: list[str] = []

    def counting(path: str, *args: Any, **kwargs: Any) -> IO[Any]:
        opened.append(str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(leftovers, "open", counting, raising=False)
    (saved,) = leftovers.sweep(str(tmp_path), "out")
    assert [p for p in opened if p.endswith(leftovers.MARKER)] == [str(old / leftovers.MARKER)]
    assert not old.exists()
    assert sorted(p.name for p in Path(saved).iterdir()) == ["NOTES.txt"]


def test_sweep_moves_aside_a_tree_whose_manifest_only_mentions_lnetgen(tmp_path: Path) -> None:
    """A manifest that names ``lnetgen_version`` but does not parse proves nothing: the whole
    tree is moved aside, nothing deleted (as before the one reader)."""
    old = _old_tree(tmp_path, '{"lnetgen_version": "1", "files": [')
    (saved,) = leftovers.sweep(str(tmp_path), "out")
    assert not old.exists()
    names = sorted(p.name for p in Path(saved).iterdir())
    assert names == ["NOTES.txt", "a.conf", leftovers.MARKER]


def test_a_directory_whose_manifest_does_not_mention_lnetgen_stays(tmp_path: Path) -> None:
    old = _old_tree(tmp_path, '{"files": []}')
    assert leftovers.sweep(str(tmp_path), "out") == ()
    assert sorted(p.name for p in old.iterdir()) == ["NOTES.txt", "a.conf", leftovers.MARKER]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"files": []}', "no lnetgen_version"),
        ('{"lnetgen_version": "1"}', "'files'"),
        ('{"lnetgen_version": "1", "files": [{"path": "../x", "sha256": "0"}]}', "leaves"),
        ('{"lnetgen_version": "1", "files": [{"path": "x", "sha256": 0}]}', "bad entry"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ],
)
def test_read_listed_says_why_a_manifest_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / leftovers.MARKER).write_text(text)
    with pytest.raises(ValueError, match=message):
        leftovers.read_listed(str(tmp_path))


# --- a net number of thousands of digits is refused by ``nodes.parse_net`` itself ---------

HUGE_NET = "o2ib" + "9" * 5000
DEMO = str(Path(__file__).resolve().parent.parent / "sites" / "demo.yaml")


@pytest.mark.parametrize("text", [HUGE_NET, "o2ib" + "1" * 11, "gni" + "0" * 5000 + "1" * 11])
def test_parse_net_refuses_an_over_long_number_itself(text: str) -> None:
    """``int()`` of more than 4,300 digits raised a plain ValueError out of ``parse_net``."""
    with pytest.raises(nodes.NodeSyntaxError) as exc:
        nodes.parse_net(text)
    assert len(str(exc.value)) < 300


def test_parse_net_reads_leading_zeros_as_libcfs_does() -> None:
    assert str(nodes.parse_net("o2ib" + "0" * 5000 + "7")) == "o2ib7"
    assert str(nodes.parse_nid("5@gni" + "0" * 20)) == "5@gni"
    with pytest.raises(nodes.NodeSyntaxError, match="net number 100000 is outside"):
        nodes.parse_net("o2ib100000")


@pytest.fixture(scope="module")
def demo_plan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    assert CliRunner().invoke(main, ["solve", DEMO, "--out", str(path)]).exit_code == 0
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize(
    ("keys", "value", "where"),
    [
        (("client_classes", 0, "net"), HUGE_NET, "$.client_classes[0].net"),
        (("servers", 0, "nid"), "10.10.2.1@" + HUGE_NET, "$.servers[0].nid"),
    ],
)
def test_a_plan_with_a_net_number_of_thousands_of_digits_is_refused(
    demo_plan: dict[str, Any],
    tmp_path: Path,
    keys: tuple[str | int, ...],
    value: str,
    where: str,
) -> None:
    """The plan reader's net check let the ValueError of ``int()`` through: a traceback."""
    doc = copy.deepcopy(demo_plan)
    target: Any = doc
    for k in keys[:-1]:
        target = target[k]
    target[keys[-1]] = value
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(doc), encoding="utf-8")
    r = CliRunner().invoke(main, ["place", "clients", DEMO, "--oss", "oss01", "--plan", str(plan)])
    assert isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2, r.output
    assert f"error[E-PLAN] {where}: " in r.output
    assert len(r.output) < 1000


@pytest.mark.parametrize(
    "text",
    [
        "options lnet networks=" + HUGE_NET + "(ib0)\n",
        "options lnet networks=gni(ipogif0) routes=" + '"' + HUGE_NET + ' 1@gni"\n',
        "options lnet networks=gni(ipogif0) routes=" + '"o2ib1 1@' + HUGE_NET + '"\n',
    ],
)
def test_modprobe_net_of_thousands_of_digits_is_a_located_error(text: str) -> None:
    """``networks=`` and ``routes=`` longer than the kernel's buffer are refused before any
    number in them is read (the ValueError handlers for them were never reached)."""
    with pytest.raises(LiveParseError) as info:
        parse_dump(text, "nid00001.modprobe.conf")
    d = info.value.diagnostic
    assert (d.code, d.line) == ("E-LIVE-PARSE", 1), d.format()
    assert len(d.message) < 500
