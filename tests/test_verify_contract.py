"""``lnetgen verify`` against the command-line contract: locating thousands of findings reads
each file once (it read the file once per finding: a dump with 3,781 wrong routes took two
minutes), ``--hosts`` is bounded before it is expanded, ``--ping-plan`` never writes into what
verify reads, empty option values are refused by name, and a manifest repeating a key is
unusable input."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT

from lnetgen import api
from lnetgen.cli import main
from lnetgen.verify import locate, parse_manifest, verify

DEMO = ROOT / "sites/demo.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["verify", *args])


def no_traceback(r: Result) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output, r.output


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site as ``generate`` writes it (a tree verify proves)."""
    out = tmp_path_factory.mktemp("demo") / "out"
    api.write_output(api.generate(str(DEMO)), str(out))
    return out


@pytest.fixture
def tree(generated: Path, tmp_path: Path) -> Path:
    t = tmp_path / "t"
    shutil.copytree(generated, t)
    return t


def snapshot(root: Path) -> dict[str, bytes]:
    """Every entry under ``root``: a file's bytes, a directory's or link's kind."""
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() and not p.is_symlink() else b"/"
        for p in sorted(root.rglob("*"))
    }


class _CountingPattern:
    """``locate._KEY`` that counts the lines it is matched against."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.calls = pattern, 0

    def match(self, text: str) -> re.Match[str] | None:
        self.calls += 1
        return self.pattern.match(text)


# ----------------------------------------------------------------------------- locating


def _routes_yaml(n: int) -> tuple[str, list[tuple[str, str, int]]]:
    """An lnetctl file with ``n`` route entries: the text and (net, gateway, gateway line)."""
    lines = ["net:", "    - net type: gni", "      local NI(s):", "route:"]
    entries = []
    for i in range(n):
        net, gw = f"o2ib{1 + i % 7}", f"{1000 + i}@gni"
        lines += [f"    - net: {net}", f"      gateway: {gw}", "      hop: 1", "      priority: 0"]
        entries.append((net, gw, len(lines) - 2))
    return "\n".join(lines) + "\n", entries


def test_locating_routes_indexes_the_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every route of a file located: the file is scanned once (it was scanned once per
    route, 3,781 routes took minutes), and each place is the one a scan finds."""
    text, entries = _routes_yaml(300)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    spy = _CountingPattern(locate._KEY)
    monkeypatch.setattr(locate, "_KEY", spy)
    loc = locate.Locator()
    for i, (net, gw, line) in enumerate(entries):
        assert loc.route(str(path), net, gw) == locate.Place(line, 7, f"$.route[{i}]")
    first = {net: (line - 1, i) for i, (net, _gw, line) in reversed(list(enumerate(entries)))}
    for net, (line, i) in first.items():  # an unknown gateway: the first entry to the net
        assert loc.route(str(path), net, "9@gni") == locate.Place(line, 1, f"$.route[{i}]")
    assert loc.route(str(path), "tcp9", "9@gni") == locate.Place(4, 1, "$.route")
    assert loc.net(str(path), "gni") == locate.Place(2, 7, "$.net[0]")
    assert spy.calls <= 2 * len(text.split("\n")), spy.calls


def test_verify_locates_thousands_of_wrong_routes_in_one_pass(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Routes through gateways no host owns, each a finding at its ``gateway:`` line."""
    path = tree / "lnetctl/clients-gni.yaml"
    text = path.read_text()
    extra = "".join(
        f"    - net: o2ib{300 + i % 40}\n      gateway: {1000 + i}@gni\n      hop: 1\n"
        "      priority: 0\n"
        for i in range(400)
    )
    at = text.index("route:\n") + len("route:\n")
    path.write_text(text[:at] + extra + text[at:])
    first_line = text[:at].count("\n") + 1
    spy = _CountingPattern(locate._KEY)
    monkeypatch.setattr(locate, "_KEY", spy)
    res = verify(str(tree))
    found = [d for d in res.findings if d.code == "V-GW-UNKNOWN"]
    assert len(found) == 400
    for i in range(400):
        d = found[i]
        assert f"via {1000 + i}@gni:" in d.message
        assert (d.file, d.line, d.col, d.path) == (
            str(path),
            first_line + 4 * i + 1,
            7,
            f"$.route[{i}]",
        )
    total = sum(len(p.read_text().split("\n")) for p in (tree / "lnetctl").iterdir())
    assert spy.calls <= 2 * total, spy.calls


def test_modprobe_routes_are_located_like_a_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``routes=`` line with hundreds of gateways: each at its first occurrence (as
    ``str.find`` has it, inside a longer address too), through one index of the line."""
    from lnetgen.verify import textfind

    monkeypatch.setattr(textfind, "_REPAY", 2)
    routes = "; ".join(f"o2ib{i % 5} {10 + i}@gni" for i in range(400))
    line = f'options lnet networks="gni(ipogif0)" routes="{routes}"'
    path = tmp_path / "c.conf"
    path.write_text(f"# a comment\n{line}\n")
    loc = locate.Locator()
    at = line.index("routes=")
    for i in range(0, 400, 7):
        addr = str(10 + i)
        want = line.find(addr, at) + 1
        assert loc.route(str(path), f"o2ib{i % 5}", f"{addr}@gni") == locate.Place(
            2, want, "$.routes"
        )
    assert loc.route(str(path), "o2ib9", "") == locate.Place(2, at + 1, "$.routes")
    [(_n, _at, finder)] = loc._file(str(path)).params.values()
    assert finder is not None and finder.indexed


@pytest.mark.parametrize(("repay", "most"), [(0, 1 << 20), (1024, 1 << 20), (0, 8)])
def test_finder_answers_what_str_find_does(
    repay: int, most: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexed at once, after reading the text 1024 times, or never (a text over the bound)."""
    from lnetgen.verify import textfind

    monkeypatch.setattr(textfind, "_REPAY", repay)
    monkeypatch.setattr(textfind, "_MAX", most)
    rnd = random.Random(7)
    chars = 'ab1.@"' + " :,=\n"
    for _ in range(60):
        text = "".join(rnd.choice(chars) for _ in range(rnd.randint(0, 200)))
        f = textfind.Finder(text)
        for _ in range(80):
            if text and rnd.random() < 0.6:
                i = rnd.randrange(len(text))
                needle = text[i : i + rnd.randint(0, 8)]
            else:
                needle = "".join(rnd.choice(chars) for _ in range(rnd.randint(0, 5)))
            start = rnd.randint(0, len(text) + 1)
            assert f.find(needle, start) == text.find(needle, start), (text, needle, start)
    long = ",".join(f'"10.20.{i // 250}.{i % 250}@o2ib"' for i in range(3000))
    f = textfind.Finder(long)
    for i in range(0, 3000, 37):
        nid = f"10.20.{i // 250}.{i % 250}@o2ib"
        assert f.find(nid, 5) == long.find(nid, 5)
    assert f.indexed == (repay == 0 and most > 8)


class _CountingText(str):
    """A manifest text that counts the scans made of it with ``find`` and ``count``."""

    scans = 0

    def find(self, *args: Any) -> int:  # type: ignore[override]
        _CountingText.scans += 1
        return super().find(*args)

    def count(self, *args: Any) -> int:  # type: ignore[override]
        _CountingText.scans += 1
        return super().count(*args)


def _old_line_of(text: str, *needles: str) -> int:
    pos = 0
    for n in needles:
        pos = text.find(n, pos)
        if pos < 0:
            return 0
    return text.count("\n", 0, pos) + 1


def test_manifest_findings_are_located_without_rescanning(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20,000 ``mgs_nids`` took 14 s: each finding searched the manifest from the file system
    and counted its lines again.  Now the same lines, and the text is read a bounded number of
    times (here 4 before the index is built instead; 1024 by default)."""
    from lnetgen.verify import textfind

    monkeypatch.setattr(textfind, "_REPAY", 4)
    doc = json.loads((generated / "manifest.json").read_text())
    nids = [f"10.20.{i // 250}.{i % 250}@tcp9" for i in range(3000)]
    doc["filesystems"]["home"]["mgs_nids"] += nids
    text = json.dumps(doc, indent=1, sort_keys=True)
    m = parse_manifest(text.encode(), "manifest.json")
    m.text = _CountingText(text)
    _CountingText.scans = 0
    asked = 0
    for nid in [*nids, "10.10.2.2@o2ib201", "nowhere"]:
        for needles in (
            ('"filesystems"', '"home":', '"mgs_nids"', nid),
            ('"filesystems"', '"home":', '"mgs_nids"', f'"{nid}"'),
        ):
            assert m.line_of(*needles) == _old_line_of(text, *needles), needles
            asked += 1
    assert m.line_of('"filesystems"', '"home":', '"mount"') == _old_line_of(
        text, '"filesystems"', '"home":', '"mount"'
    )
    # a scan (two: find and count) per look-up before; a few hundred in all now
    assert _CountingText.scans < asked // 10, (_CountingText.scans, asked)


def test_verify_locates_each_of_many_mount_nids(tree: Path) -> None:
    mpath = tree / "manifest.json"
    doc = json.loads(mpath.read_text())
    nids = [f"10.20.{i // 250}.{i % 250}@tcp9" for i in range(1500)]
    doc["filesystems"]["home"]["mgs_nids"] += nids
    mpath.write_text(json.dumps(doc, indent=1, sort_keys=True))
    lines = mpath.read_text().split("\n")
    where = {ln.strip().strip('",'): n for n, ln in enumerate(lines, 1) if "@tcp9" in ln}
    res = verify(str(tree))
    for code in ("V-NID-NOT-CLIENT", "V-MOUNT-UNREACHABLE"):
        got = {
            re.search(r"10\.20\.\S+@tcp9", d.message).group(): d.line  # type: ignore[union-attr]
            for d in res.findings
            if d.code == code and "@tcp9" in d.message
        }
        assert got == {n: where[n] for n in nids}, code


# ----------------------------------------------------------------------------- --hosts


def test_a_huge_hosts_set_is_refused_before_it_is_expanded(tree: Path) -> None:
    """``--hosts 'rtr[1-999999999]'`` ended in a MemoryError traceback."""
    for fmt in ("text", "json"):
        r = run(str(tree), "--hosts", "rtr[1-999999999]", "--format", fmt)
        no_traceback(r)
        assert r.exit_code == 2, r.output
        assert "--hosts" in r.output and "more than 1,000,000" in r.output, r.output
    assert run(str(tree), "--hosts", "rtr[01-02]").exit_code == 0


# ----------------------------------------------------------------------------- --ping-plan


@pytest.mark.parametrize(
    "target",
    ["plan.json", "manifest.json", "lnetctl/rtr01.yaml", "README.txt", "new.txt", "lnetctl/../x"],
)
def test_a_ping_plan_inside_the_tree_is_refused(tree: Path, target: str) -> None:
    """``--ping-plan tree/plan.json`` replaced a file of the tree; the next ``generate``
    refused the tree as edited (E-OUTPUT-EDITED)."""
    before = snapshot(tree)
    r = run(str(tree), "--ping-plan", str(tree / target))
    no_traceback(r)
    assert r.exit_code == 2, r.output
    assert "--ping-plan" in r.output and "OUT_DIR" in r.output, r.output
    assert snapshot(tree) == before
    api.write_output(api.generate(str(DEMO)), str(tree))  # generate still owns the tree


def test_a_ping_plan_through_a_link_into_the_tree_is_refused(tree: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tree, target_is_directory=True)
    before = snapshot(tree)
    r = run(str(tree), "--ping-plan", str(link / "plan.json"))
    assert r.exit_code == 2 and "--ping-plan" in r.output, r.output
    r = run(str(link), "--ping-plan", str(tree / "new.txt"))
    assert r.exit_code == 2 and "--ping-plan" in r.output, r.output
    assert snapshot(tree) == before


def test_a_ping_plan_on_the_live_dumps_or_manifest_is_refused(tree: Path, tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    shutil.copy(tree / "lnetctl/rtr01.yaml", live / "rtr01.yaml")
    manifest = tmp_path / "manifest.json"
    shutil.copy(tree / "manifest.json", manifest)
    before = snapshot(tmp_path)
    cases = [
        ["--live", str(live), "--manifest", str(manifest), "--ping-plan", str(live / "p.txt")],
        ["--live", str(live), "--manifest", str(manifest), "--ping-plan", str(manifest)],
        [
            "--live",
            str(live / "rtr01.yaml"),
            "--manifest",
            str(manifest),
            "--ping-plan",
            str(live / "rtr01.yaml"),
        ],
    ]
    for args in cases:
        r = run(*args)
        no_traceback(r)
        assert r.exit_code == 2 and "--ping-plan" in r.output, r.output
    assert snapshot(tmp_path) == before


def test_a_ping_plan_outside_the_tree_is_written(tree: Path, tmp_path: Path) -> None:
    """A new file, and an existing file outside every input, which is replaced."""
    new = tmp_path / "ping.txt"
    assert run(str(tree), "--ping-plan", str(new)).exit_code == 0
    old = tmp_path / "old.txt"
    old.write_text("yesterday's plan\n")
    assert run(str(tree), "--ping-plan", str(old)).exit_code == 0
    assert old.read_bytes() == new.read_bytes()
    assert new.read_text().startswith("# generated by lnetgen ")


# ----------------------------------------------------------------------------- empty values


@pytest.mark.parametrize("option", ["--manifest", "--ping-plan", "--live"])
def test_an_empty_option_value_is_refused_by_name(tree: Path, option: str) -> None:
    """``--manifest ''`` and ``--ping-plan ''`` ran as if absent; ``--live ''`` was refused
    without naming the option."""
    for fmt in ("text", "json"):
        r = run(str(tree), option, "", "--format", fmt)
        no_traceback(r)
        assert r.exit_code == 2, r.output
        assert f"{option}: '' is empty" in r.output, r.output
        if fmt == "json" and r.stdout.strip():
            json.loads(r.stdout)


# ----------------------------------------------------------------------------- manifest


def test_a_manifest_repeating_a_key_is_unusable(tree: Path) -> None:
    """The last of two ``"mgs"`` keys silently won: the reader saw one MGS, verify another."""
    mpath = tree / "manifest.json"
    text = mpath.read_text()
    new, n = re.subn(
        r'\n(\s*)"mgs": ("[^"]*"),', r'\n\1"mgs": "oss01",\n\1"mgs": \2,', text, count=1
    )
    assert n == 1
    mpath.write_text(new)
    r = run(str(tree), "--format", "json")
    no_traceback(r)
    assert r.exit_code == 2, r.output
    doc = json.loads(r.stdout)
    [d] = doc["diagnostics"]
    assert d["code"] == "E-VERIFY-MANIFEST" and d["file"] == str(mpath)
    assert "'mgs' appears twice" in d["message"], d
    assert os.path.exists(mpath)
