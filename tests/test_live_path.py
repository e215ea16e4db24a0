"""Reading a live PATH: per-host files merged, generated trees read through their manifest,
and bad names, special files, oversized dumps and bad manifests reported, never read blindly."""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

import pytest

from lnetgen import live
from lnetgen.diagnostics import InputError
from lnetgen.live import LiveParseError, read_live
from lnetgen.live import files as live_files
from lnetgen.live import manifest as live_manifest

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).resolve().parent / "fixtures" / "live"
DEMO = FIX / "demo"


@cache
def demo_live() -> live.LiveSet:
    return read_live(str(DEMO))


# ----------------------------------------------------------------------------- reading PATH


def test_read_live_directory_merges_files_per_host() -> None:
    ls = demo_live()
    assert sorted(ls.hosts) == [
        "nid00001",
        "nid00002",
        "nid00003",
        "nid00004",
        "oss01",
        "oss02",
        "oss03",
        "oss04",
        "oss05",
        "rtr01",
        "rtr02",
        "rtr03",
        "rtr04",
    ]
    assert ls.errors == [] and ls.generated is None
    assert ls.files["rtr03"] == (str(DEMO / "rtr03.net.yaml"), str(DEMO / "rtr03.routes.txt"))


def test_read_live_single_file_and_bad_paths(tmp_path: Path) -> None:
    ls = read_live(str(DEMO / "oss03.conf"))
    assert list(ls.hosts) == ["oss03"]
    with pytest.raises(InputError, match="no such file"):
        read_live(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no dump files"):
        read_live(str(tmp_path / "empty"))


def test_read_live_keeps_going_after_a_bad_dump(tmp_path: Path) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    shutil.copy(FIX / "garbled" / "truncated.yaml", tmp_path / "oss02.yaml")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"]
    assert ls.error_hosts == {"oss02"}
    assert ls.errors[0].file == str(tmp_path / "oss02.yaml") and ls.errors[0].line == 16


def test_identical_route_sections_are_parsed_once(tmp_path: Path) -> None:
    text = (DEMO / "oss01.yaml").read_text()
    (tmp_path / "oss01.yaml").write_text(text)
    (tmp_path / "oss02.yaml").write_text(
        text.replace("10.10.1.1@o2ib100", "10.10.1.2@o2ib100").replace(
            "send_count: 88123", "send_count: 1"
        )
    )
    ls = read_live(str(tmp_path))
    a, b = ls.hosts["oss01"], ls.hosts["oss02"]
    assert a.routes is b.routes  # shared: compared once by the diff
    assert a.nets is not None and b.nets is not None
    assert a.nets.nids != b.nets.nids


def test_read_generated_tree(tmp_path: Path) -> None:
    from lnetgen.api import generate, write_output

    gen = generate(str(ROOT / "sites" / "demo.yaml"), None, "lnetctl,modprobe")
    write_output(gen, str(tmp_path / "out"))
    ls = read_live(str(tmp_path / "out"))
    assert ls.generated is not None and ls.generated["site"] == "demo"
    assert len(ls.hosts) == 130
    assert ls.hosts["nid00001"] is ls.hosts["nid00096"]  # one class file, one state
    assert ls.hosts["nid00001"].formats == (live.CONFIG,)  # lnetctl preferred to modprobe
    assert ls.hosts["rtr01"].routing is True and ls.hosts["oss01"].routing is False


# ----------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize(
    "name",
    [
        "rtr[01.yaml",
        "rtr01]",
        "rtr\n01.yaml",
        "rtr01.\x1b[2J.yaml",
        "rtr01.yaml\n",
        "-rtr01",
        "rtr_01",
        "\u043ess01.yaml",
        "x" * 64,
        "nid@gni",
    ],
)
def test_host_of_refuses_names_that_are_not_host_names(name: str) -> None:
    with pytest.raises(LiveParseError) as err:
        live.host_of("/d/" + name)
    d = err.value.diagnostic
    assert d.code == "E-LIVE-NAME" and d.line == 0
    assert d.file.startswith("/d/") and d.file.isprintable() and d.message.isprintable()


def test_bad_file_names_are_unreadable_dumps(tmp_path: Path) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "rtr[01.yaml")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss04\n.conf")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"] and ls.error_hosts == set()
    assert [(os.path.basename(d.file), d.code) for d in ls.errors] == [
        ("oss04\\n.conf", "E-LIVE-NAME"),
        ("rtr[01.yaml", "E-LIVE-NAME"),
    ]
    assert "'rtr[01' is not a host name" in ls.errors[1].message
    one = read_live(str(tmp_path / "rtr[01.yaml"))
    assert one.hosts == {} and [d.code for d in one.errors] == ["E-LIVE-NAME"]


def test_special_files_are_refused_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "rtr01.yaml")  # nobody writes: opening it for reading would block
    os.symlink("/dev/zero", tmp_path / "rtr02.yaml")  # never ends, and its size reads 0
    os.symlink(tmp_path / "nowhere", tmp_path / "rtr03.yaml")
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    ls = read_live(str(tmp_path))
    assert list(ls.hosts) == ["oss03"]
    assert ls.error_hosts == {"rtr01", "rtr02", "rtr03"}
    got = {os.path.basename(d.file): (d.code, d.message) for d in ls.errors}
    assert got["rtr01.yaml"] == ("E-LIVE-READ", "is a named pipe, not a regular file")
    # a link out of the dump directory is not followed at all (data-safety contract)
    assert got["rtr02.yaml"][0] == "E-LIVE-LINK" and "outside" in got["rtr02.yaml"][1]
    assert got["rtr03.yaml"][0] == "E-LIVE-LINK" and "No such file" in got["rtr03.yaml"][1]
    for path, what in ((tmp_path / "rtr01.yaml", "named pipe"), (Path("/dev/zero"), "device")):
        with pytest.raises(InputError) as err:
            read_live(str(path))
        assert err.value.diagnostics[0].code == "E-LIVE-PATH"
        assert what in err.value.diagnostics[0].message


def test_dump_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(DEMO / "oss03.conf", tmp_path / "oss03.conf")
    monkeypatch.setattr(live_files, "MAX_FILE_BYTES", 10)
    ls = read_live(str(tmp_path))
    assert [d.code for d in ls.errors] == ["E-LIVE-SIZE"] and ls.error_hosts == {"oss03"}


def _clip_id(text: str) -> str:
    return ascii(text[:30])


def _tree_with_manifest(tmp_path: Path, manifest: object) -> Path:
    (tmp_path / "lnetctl").mkdir()
    shutil.copy(DEMO / "oss03.conf", tmp_path / "lnetctl" / "x.yaml")
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    return tmp_path


def _entry(**kw: object) -> dict[str, object]:
    return {"path": "lnetctl/x.yaml", "format": "lnetctl", "hosts": "oss03", **kw}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"files": 5}, '"files" is a list of objects'),
        ([], '"files" is a list of objects'),
        ({"files": [5]}, '"files" is a list of objects'),
        ({"files": [_entry(path=5)]}, 'files[0] needs a text "path" and "hosts"'),
        ({"files": [_entry(hosts=["oss03"])]}, 'files[0] needs a text "path" and "hosts"'),
        ({"files": [_entry(hosts="n[1-999999999]")]}, "'n[1-999999999]' of 'lnetctl/x.yaml'"),
        ({"files": [_entry(hosts="rtr[01")]}, "bad hosts 'rtr[01'"),
        ({"files": [_entry(hosts="rtr_01")]}, "'rtr_01' is not a host name"),
        ({"files": [_entry(path="lnetctl/x\n.yaml")]}, "'lnetctl/x\\n.yaml' is empty or holds"),
        ({"files": [_entry(path="lnetctl/\x00")]}, "cannot be printed"),
        ({"files": [_entry(path="/etc/passwd")]}, "leaves the directory"),
        ("[" * 100_000 + "]" * 100_000, "not an lnetgen manifest"),  # JSON nested too deeply
        ('{"files": [', "not an lnetgen manifest"),
        (b"\xff\xfe".decode("latin-1"), "not an lnetgen manifest"),
        ({"files": [_entry(format="plan")]}, "lists no lnetctl or modprobe files"),
    ],
    ids=lambda v: _clip_id(v) if isinstance(v, str) else None,
)
def test_bad_manifests_are_path_errors(tmp_path: Path, manifest: object, message: str) -> None:
    path = _tree_with_manifest(tmp_path, manifest)
    with pytest.raises(InputError) as err:
        read_live(str(path))
    d = err.value.diagnostics[0]
    assert d.code == "E-LIVE-PATH" and message in d.message, d.format()
    assert d.format().isprintable() and len(d.format()) < 500


def test_manifest_hosts_are_counted_over_all_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_manifest, "MAX_MANIFEST_HOSTS", 100)
    files = [_entry(hosts="n[1-60]"), _entry(path="lnetctl/y.yaml", hosts="m[1-60]")]
    with pytest.raises(InputError) as err:
        read_live(str(_tree_with_manifest(tmp_path, {"files": files})))
    assert "at most 100 in all" in err.value.diagnostics[0].message


def test_manifest_entry_linked_to_a_device(tmp_path: Path) -> None:
    path = _tree_with_manifest(tmp_path, {"files": [_entry(hosts="oss[03-04]")]})
    os.remove(path / "lnetctl" / "x.yaml")
    os.symlink("/dev/zero", path / "lnetctl" / "x.yaml")
    ls = read_live(str(path))
    assert ls.hosts == {} and ls.error_hosts == {"oss03", "oss04"}
    assert [d.code for d in ls.errors] == ["E-LIVE-LINK"]  # not followed out of the tree


def test_manifest_fields_are_shown_safely(tmp_path: Path) -> None:
    manifest = {"site": "demo\x1b[2J", "strategy": {"x": 1}, "files": [_entry()]}
    ls = read_live(str(_tree_with_manifest(tmp_path, manifest)))
    assert ls.generated is not None
    assert ls.generated["site"] == "demo\\x1b[2J" and ls.generated["strategy"] == ""
    assert list(ls.hosts) == ["oss03"]


# ----------------------------------------------------------------------------- links


def test_links_out_of_the_dump_directory_are_not_followed(tmp_path: Path) -> None:
    """A dump directory copied with ``rsync -a`` may hold links; one to a secret outside it
    is refused and its content never printed, a looping one is one bad dump among the rest,
    and a link inside the directory is read."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    d = tmp_path / "dumps"
    shutil.copytree(DEMO, d)
    (d / "rtr90.yaml").symlink_to(secret)
    (d / "rtr91.yaml").symlink_to("rtr92.yaml")
    (d / "rtr92.yaml").symlink_to("rtr91.yaml")
    (d / "rtr93.txt").write_text(secret.read_text())
    inside = sorted(p.name for p in DEMO.iterdir() if p.name.startswith("oss01"))[0]
    (d / "oss99.yaml").symlink_to(inside)
    ls = read_live(str(d))
    codes = {Path(e.file).name: e.code for e in ls.errors}
    assert codes["rtr90.yaml"] == "E-LIVE-LINK" and codes["rtr91.yaml"] == "E-LIVE-LINK"
    assert "SECRETHASH" not in json.dumps([e.as_dict() for e in ls.errors])
    assert "oss99" in ls.hosts and "oss01" in ls.hosts  # the rest is still compared
    assert "rtr90" not in ls.hosts


def test_diff_never_echoes_a_file_that_is_no_dump(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from lnetgen.cli import main

    d = tmp_path / "dumps"
    shutil.copytree(DEMO, d)
    (tmp_path / "shadow").write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    (d / "rtr90.yaml").symlink_to(tmp_path / "shadow")
    (d / "rtr91.yaml").write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    site = str(ROOT / "sites" / "demo.yaml")
    for fmt in ("text", "json"):
        res = CliRunner().invoke(main, ["diff", site, "--live", str(d), "--format", fmt])
        assert res.exit_code == 1, res.output
        assert "SECRETHASH" not in res.output
