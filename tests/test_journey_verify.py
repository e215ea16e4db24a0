"""What two reviewers found walking the whole workflow: a shared MGS with a failover partner
(formatted once, proved by ``verify``), and README.txt's LOADING section saying which hosts a
modprobe file alone configures on the release stated."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from lnetgen.api import generate, write_output
from lnetgen.verify import verify

DEMO = ROOT / "sites" / "demo.yaml"


def _site(tmp: Path, name: str, edits: list[tuple[str, str]], tail: str = "") -> Path:
    text = DEMO.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp / f"{name}.yaml"
    path.write_text(text + tail)
    return path


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo with home's MGS on mds01 of scratch, which has a standby MDS mds03 as its
    failover partner (docs/inventory.md: ``mgs`` may be a server of another file system)."""
    mds03 = (
        "  - name: mds03\n    role: mds\n    fs: scratch\n    ip: 10.10.2.3\n"
        '    interface: ib0\n    guid: "0x0002c90300c00003"\n'
        "    attach: {switch: core2, leaf: L03, port: 7}\n    mdts: []\n    failover: mds01\n"
    )
    return _site(
        tmp_path_factory.mktemp("shared"),
        "shared",
        [
            (
                "  - name: home\n    net_base: 200\n",
                "  - name: home\n    net_base: 200\n    mgs: mds01\n",
            ),
            (
                "    attach: {switch: core2, leaf: L03, port: 5}\n",
                "    attach: {switch: core2, leaf: L03, port: 5}\n    failover: mds03\n",
            ),
        ],
        mds03,
    )


@pytest.fixture(scope="module")
def shared_out(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("shared-out") / "out"
    write_output(generate(str(shared), "projection"), str(out))
    return out


def _files(site: Path, strategy: str) -> dict[str, str]:
    return {f.path: f.content for f in generate(str(site), strategy).files}


@pytest.mark.parametrize("strategy", ["projection", "round-robin"])
def test_shared_mgs_with_failover_partner_is_proved(
    shared: Path, strategy: str, tmp_path: Path
) -> None:
    write_output(generate(str(shared), strategy, "lnetctl"), str(tmp_path / "out"))
    result = verify(str(tmp_path / "out"))
    assert not result.errors, [d.format() for d in result.errors[:5]]
    # home's clients and servers are proved against the shared MGS and its partner too
    assert result.counts["home"]["server->server"].pairs == 6 * 5


def test_shared_mgs_is_formatted_once(shared: Path) -> None:
    files = _files(shared, "projection")
    readme, manifest = files["README.txt"], json.loads(files["manifest.json"])
    assert len(re.findall(r"^ +mkfs\.lustre --mgs ", readme, re.M)) == 1
    mgts = [
        (fs, s["name"])
        for fs, f in manifest["filesystems"].items()
        for s in f["servers"]
        for t in s["targets"]
        if t["kind"] == "mgt"
    ]
    assert mgts == [("scratch", "mds01")]
    home = manifest["filesystems"]["home"]
    by_name = {s["name"]: s for s in home["servers"]}
    assert {"mds01", "mds03"} <= set(by_name)
    assert by_name["mds01"]["mgs"] and not by_name["mds01"]["targets"]
    assert not by_name["mds03"]["targets"]
    mgsnode = " ".join(f"--mgsnode={','.join(by_name[n]['nids'])}" for n in ("mds01", "mds03"))
    home_targets = [t for s in home["servers"] for t in s["targets"]]
    assert home_targets and all(mgsnode in t["mkfs"] for t in home_targets)
    nids = by_name["mds01"]["client_nids"] + by_name["mds03"]["client_nids"]
    assert home["mgs_nids"] == nids
    assert home["mount"] == ":".join(nids) + ":/home"
    section = readme[readme.index("3. FILE SYSTEM home") :]
    assert "MGS: mds01 (shared with scratch, whose section formats it)" in section
    assert "the shared MGS target is formatted once, under FILE" in section
    own = readme[readme.index("3. FILE SYSTEM scratch") : readme.index("3. FILE SYSTEM home")]
    assert "MGS: mds01 (also the MGS of home)" in own  # whoever reformats it sees who loses


def _manifest_edit(tree: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = tree / "manifest.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def test_verify_rejects_a_shared_mgs_formatted_twice(shared_out: Path, tmp_path: Path) -> None:
    """What lnetgen wrote before: the MGS target formatted again under home."""
    tree = tmp_path / "t"
    shutil.copytree(shared_out, tree)

    def again(doc: dict[str, Any]) -> None:
        (mgt,) = [
            t
            for s in doc["filesystems"]["scratch"]["servers"]
            for t in s["targets"]
            if t["kind"] == "mgt"
        ]
        (mds01,) = [s for s in doc["filesystems"]["home"]["servers"] if s["name"] == "mds01"]
        mds01["targets"] = [mgt]

    _manifest_edit(tree, again)
    found = [d for d in verify(str(tree)).errors if d.code == "V-MGS"]
    assert len(found) == 1, [d.format() for d in found]
    assert "formats its MGS again" in found[0].message and "also under scratch" in found[0].message
    assert found[0].path == "$.filesystems.home.servers[0].targets" and found[0].line > 0


def test_verify_rejects_an_mgs_formatted_nowhere(shared_out: Path, tmp_path: Path) -> None:
    tree = tmp_path / "t"
    shutil.copytree(shared_out, tree)

    def drop(doc: dict[str, Any]) -> None:
        for s in doc["filesystems"]["scratch"]["servers"]:
            s["targets"] = [t for t in s["targets"] if t["kind"] != "mgt"]

    _manifest_edit(tree, drop)
    found = sorted(d.path for d in verify(str(tree)).errors if d.code == "V-MGS")
    assert found == ["$.filesystems.home.mgs", "$.filesystems.scratch.mgs"]


def _loading(readme: str) -> str:
    return " ".join(readme[readme.index("LOADING") : readme.index("1. FILES PER HOST")].split())


def test_loading_names_the_hosts_a_modprobe_file_cannot_configure(tmp_path: Path) -> None:
    """Clients on 2.20 get a modprobe file without routes= (their module parses none): the
    README must not tell the admin that file alone configures them."""
    site = _site(
        tmp_path,
        "c220",
        [("\nclient_nets:", '\nlustre: {version: "2.15.6", client: "2.20.0"}\n\nclient_nets:')],
    )
    files = _files(site, "round-robin")
    clients = [text for path, text in files.items() if path.startswith("modprobe/clients-")]
    assert clients and not any("routes=" in text for text in clients)
    text = _loading(files["README.txt"])
    assert "Clients must therefore bring LNet up with lnet.service" in text
    assert "a client has no routes and cannot mount" in text
    assert (
        "Routers and servers that bring LNet up without lnet.service (a Lustre mount, lctl "
        "network up) are configured by their modprobe file alone" in text
    )
    assert "Hosts that bring LNet up" not in text


def test_loading_when_every_host_runs_a_release_without_module_routes(tmp_path: Path) -> None:
    site = _site(
        tmp_path, "all220", [("\nclient_nets:", '\nlustre: {version: "2.20.0"}\n\nclient_nets:')]
    )
    text = _loading(_files(site, "groups")["README.txt"])
    assert "Clients, routers and servers must therefore bring LNet up with lnet.service" in text
    assert "a router does not forward" in text and "a server has no routes" in text
    assert "modprobe file alone:" not in text


def test_loading_with_the_release_unknown_says_which_releases(tmp_path: Path) -> None:
    text = _loading(_files(DEMO, "groups")["README.txt"])
    assert "Hosts on Lustre before 2.19.53 that bring LNet up without lnet.service" in text
    assert "From 2.19.53 on the module ignores routes= and forwarding=" in text
