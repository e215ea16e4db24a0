"""The collect -> diff/verify journey of a reviewer (fake ssh through ``collect --exec``):

1. ``export --backup`` prints no NID, so a moved server address compared equal without a word:
   such dumps now say their NIDs are not compared, and ``collect`` gathers ``lnetctl net
   show`` beside the export, which makes the move a ``! nid`` change;
2. a collect directory is read as dumps: a dump added by hand for a host collect could not
   reach, and a modprobe file beside an export, are read (its manifest was taken for a
   generated tree's, which lists only what collect wrote);
3. a stale modprobe file no longer overrides the running state (the first file by name won);
4. ``lnetctl export``'s own error blocks (one ``show:`` per failing section) no longer make the
   whole dump unreadable;
5. the reason collect records is the line that says what failed, and ``verify --live`` names it
   beside the missing host.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lnetgen.cli import main
from lnetgen.collect import _first_line
from lnetgen.live import MODPROBE, read_live
from lnetgen.live.assemble import merge_states
from lnetgen.live.state import HostState, NetTable, RouteTable

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"

#: ``global:`` as ``lnetctl export --backup`` prints it (every setting, numa_range first)
GLOBAL = """global:
    numa_range: 0
    max_interfaces: 200
    discovery: 1
    drop_asym_route: 1
    retry_count: 2
    transaction_timeout: 150
    health_sensitivity: 100
    recovery_interval: 1
    router_sensitivity: 100
    lnd_timeout: 49
    response_tracking: 3
    recovery_limit: 0
    max_recovery_ping_interval: 900
"""
NETWORK_DOWN = (
    'show:\n    - net:\n          errno: -100\n          descr: "cannot get networks: '
    'Network is down"\n'
)
NOT_COMPARED = "NIDs not compared: the dumps (lnetctl export --backup) show none"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "demo"
    r = CliRunner().invoke(main, ["generate", str(DEMO), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo site with oss02 at a new address (10.10.1.2 -> 10.10.1.102)."""
    text = DEMO.read_text(encoding="utf-8")
    assert text.count("ip: 10.10.1.2\n") == 1
    path = tmp_path_factory.mktemp("site") / "demo.yaml"
    path.write_text(text.replace("ip: 10.10.1.2\n", "ip: 10.10.1.102\n"), encoding="utf-8")
    return path


def backup(tree: Path, host: str) -> str:
    """What ``lnetctl export --backup`` prints on ``host`` when it runs the plan: its
    generated lnet.conf with the kernel's full ``global:``, ``routing:`` and ``buffers:``."""
    text = (tree / "lnetctl" / f"{host}.yaml").read_text(encoding="utf-8")
    body = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))
    body = body[: body.index("global:")] if "global:" in body else body
    return body + "routing:\n    enable: 0\nbuffers:\n    tiny: 0\n    small: 0\n" + GLOBAL


def net_show(tree: Path, host: str, ip: str) -> str:
    """``lnetctl net show`` on ``host``: each net of its lnet.conf with the NID at ``ip``."""
    text = (tree / "lnetctl" / f"{host}.yaml").read_text(encoding="utf-8")
    out = ["net:"]
    for net in re.findall(r"- net type: (\S+)", text):
        out += [
            f"    - net type: {net}",
            "      local NI(s):",
            f"        - nid: {ip}@{net}",
            "          status: up",
            "          interfaces:",
            "              0: ib0",
        ]
    return "\n".join(out) + "\n"


def diff(site: Path, live: Path, hosts: str, *extra: str) -> Result:
    args = ["diff", str(site), "--live", str(live), "--hosts", hosts, *extra]
    return CliRunner().invoke(main, args)


def collect(out: Path, nodeset: str, script: Path, *extra: str) -> Result:
    """``collect --exec``: ``script HOST WHAT`` stands for ssh to HOST running WHAT."""
    args = [
        "collect",
        nodeset,
        "--out",
        str(out),
        "--exec",
        "--command",
        f"sh {script} %h export",
        "--net-command",
        f"sh {script} %h net",
        "--modprobe-command",
        f"sh {script} %h modprobe",
        "--timeout",
        "20",
    ]
    return CliRunner().invoke(main, [*args, *extra])


def fake_ssh(where: Path, dumps: Path) -> Path:
    """A stand-in for ``ssh HOST CMD``: prints ``dumps/HOST.WHAT`` (nothing for a missing
    modprobe file); oss03 is down, rtr20's lnetctl prints its error YAML on stderr."""
    script = where / "fake-ssh.sh"
    script.write_text(
        f"""case $1 in
  oss03) echo "ssh: connect to host oss03 port 22: No route to host" >&2; exit 255 ;;
  rtr20) echo "Warning: Permanently added 'rtr20' (ECDSA) to the list of known hosts." >&2
         printf '{NETWORK_DOWN}' >&2; exit 255 ;;
esac
[ -f {dumps}/$1.$2 ] && exec cat {dumps}/$1.$2
[ $2 = modprobe ] || {{ echo "bash: lnetctl: command not found" >&2; exit 127; }}
""",
        encoding="utf-8",
    )
    return script


def test_backup_dumps_say_their_nids_are_not_compared(
    tree: Path, moved: Path, tmp_path: Path
) -> None:
    """oss02 moved: "live state equals the plan", exit 0, and no word about NIDs."""
    (tmp_path / "oss02.yaml").write_text(backup(tree, "oss02"), encoding="utf-8")
    r = diff(moved, tmp_path, "oss02")
    assert NOT_COMPARED in r.output, r.output
    assert "! nid" not in r.output


def test_collect_gathers_the_nids_and_diff_sees_the_moved_address(
    tree: Path, moved: Path, tmp_path: Path
) -> None:
    dumps = tmp_path / "nodes"
    dumps.mkdir()
    for h, ip in (("oss01", "10.10.1.1"), ("oss02", "10.10.1.2")):
        (dumps / f"{h}.export").write_text(backup(tree, h), encoding="utf-8")
        (dumps / f"{h}.net").write_text(net_show(tree, h, ip), encoding="utf-8")
    out = tmp_path / "live"
    r = collect(out, "oss[01-02]", fake_ssh(tmp_path, dumps))
    assert r.exit_code == 0, r.output
    assert (out / "oss02.net.yaml").read_text() == net_show(tree, "oss02", "10.10.1.2")
    d = diff(moved, out, "oss[01-02]", "--plan-changes")
    assert d.exit_code == 1, d.output
    assert "  ! nid on o2ib100: live 10.10.1.2@o2ib100, inventory 10.10.1.102@o2ib100" in d.output
    assert "1 equal, 1 differ" in d.output
    assert "NIDs not compared" not in d.output


def test_a_failed_net_show_keeps_the_host_and_says_its_nids_are_not_compared(
    tree: Path, moved: Path, tmp_path: Path
) -> None:
    dumps = tmp_path / "nodes"
    dumps.mkdir()
    (dumps / "oss02.export").write_text(backup(tree, "oss02"), encoding="utf-8")
    out = tmp_path / "live"
    r = collect(out, "oss02", fake_ssh(tmp_path, dumps))
    assert r.exit_code == 0, r.output
    assert "oss02: NIDs not collected (net show: exit status 127: bash: lnetctl: command" in (
        r.stderr
    )
    assert NOT_COMPARED in diff(moved, out, "oss02").output


def test_a_collect_directory_reads_dumps_added_by_hand(tree: Path, tmp_path: Path) -> None:
    """oss03 failed; the admin ran `lnetctl export > DIR/oss03.yaml` there and left a stale
    modprobe file for oss01: both were ignored (oss03 still "missing", no note)."""
    dumps = tmp_path / "nodes"
    dumps.mkdir()
    for h in ("oss01", "oss02"):
        (dumps / f"{h}.export").write_text(backup(tree, h), encoding="utf-8")
    out = tmp_path / "live"
    r = collect(out, "oss[01-03]", fake_ssh(tmp_path, dumps))
    assert r.exit_code == 1 and "failed: oss03" in r.stdout, r.output
    (out / "oss03.yaml").write_text(backup(tree, "oss03"), encoding="utf-8")
    (out / "oss01.conf").write_text(
        'options lnet networks="o2ib100(ib0)" routes="gni 1 10.10.0.[5-8]@o2ib100"\n'
    )
    d = diff(DEMO, out, "oss[01-03]")
    assert "0 missing" in d.output, d.output
    assert "3 hosts compared" in d.output
    assert (
        f"oss01: {out}/oss01.conf (configuration, used when LNet is loaded again) disagrees "
        f"with the running state on networks; using {out}/oss01.yaml"
    ) in d.output
    assert "+ route" not in d.output and "- route" not in d.output  # the export is compared
    assert read_live(str(out)).collect_failed == {
        "oss03": "exit status 255: ssh: connect to host oss03 port 22: No route to host"
    }


def test_the_running_state_wins_over_a_stale_modprobe_file(tree: Path, tmp_path: Path) -> None:
    """plain/oss06.conf (alphabetically first) was used, and its old routes listed as
    changes."""
    (tmp_path / "oss06.yaml").write_text(backup(tree, "oss06"), encoding="utf-8")
    (tmp_path / "oss06.conf").write_text(
        'options lnet networks="o2ib101(ib0),o2ib(ib0)" routes="gni 1 10.10.0.[5-8]@o2ib101"\n'
    )
    d = diff(DEMO, tmp_path, "oss06")
    assert "1 equal, 0 differ" in d.output, d.output
    assert f"{tmp_path}/oss06.conf (configuration, used when LNet is loaded again)" in d.output
    assert f"on routes; using {tmp_path}/oss06.yaml" in d.output


def test_a_stale_lnet_conf_does_not_hide_the_address_net_show_gives(
    tree: Path, tmp_path: Path
) -> None:
    """The NIDs come from the running state first: an old lnet.conf with ``nid:`` lines, named
    to sort before the net show, hid a server's moved address ('1 equal', exit 0) in a
    review."""
    text = (tree / "lnetctl" / "oss02.yaml").read_text(encoding="utf-8")
    conf = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))
    for net in ("o2ib100", "o2ib"):
        conf = conf.replace(
            f"    - net type: {net}\n      local NI(s):\n        - interfaces:",
            f"    - net type: {net}\n      local NI(s):\n        - nid: 10.10.1.2@{net}\n"
            "          interfaces:",
        )
    assert conf.count("- nid: 10.10.1.2@") == 2
    (tmp_path / "oss02.a.conf").write_text(conf, encoding="utf-8")
    (tmp_path / "oss02.export.yaml").write_text(backup(tree, "oss02"), encoding="utf-8")
    (tmp_path / "oss02.net.yaml").write_text(net_show(tree, "oss02", "10.10.1.77"))
    d = diff(DEMO, tmp_path, "oss02")
    assert d.exit_code == 1, d.output
    assert "! nid on o2ib100: live 10.10.1.77@o2ib100, inventory 10.10.1.2@o2ib100" in d.output


def test_a_modprobe_file_that_leaves_routes_to_lnet_conf_is_no_disagreement() -> None:
    """A DLC site's modprobe file sets no networks or routes: nothing to note, and its "no
    networks=" note is moot beside the export."""
    export = HostState(
        NetTable({"o2ib": ("ib0",)}),
        RouteTable({("gni", "10.0.0.1@o2ib"): (1, 0)}),
        False,
        sources=("h.yaml",),
        formats=("lnetctl export --backup",),
        tunables={"retry_count": 2},
    )
    modprobe = HostState(
        None,
        RouteTable({}),
        None,
        health=("no networks= (LNet would default to tcp): networks not compared",),
        sources=("h.conf",),
        formats=(MODPROBE,),
        tunables={},
        tunables_explicit=True,
    )
    for order in ([export, modprobe], [modprobe, export]):
        merged = merge_states(order)
        assert merged.routes is export.routes and merged.nets is export.nets
        assert merged.health == () and not merged.tunables_explicit


def test_error_blocks_of_lnetctl_export_are_read(tree: Path, tmp_path: Path) -> None:
    """Two failing sections gave two top-level `show:` keys: E-LIVE-PARSE, the dump unread."""
    errors = (
        "show:\n    - peer:\n          errno: -22\n"
        '          descr: "cannot get peer list: Invalid argument"\n'
        "show:\n    - udsp:\n          errno: -95\n"
        '          descr: "cannot get udsp: Operation not supported"\n'
    )
    (tmp_path / "oss02.yaml").write_text(backup(tree, "oss02") + errors, encoding="utf-8")
    d = diff(DEMO, tmp_path, "oss02")
    assert "0 unreadable dumps" in d.output and "1 equal" in d.output, d.output
    assert "lnetctl could not show peer: cannot get peer list: Invalid argument (errno -22)" in (
        d.output
    )
    assert "lnetctl could not show udsp: cannot get udsp: Operation not supported" in d.output


def test_a_section_lnetctl_could_not_show_is_not_compared(tree: Path, tmp_path: Path) -> None:
    """The failed `net:` is unknown, not "no networks" (which would add them all)."""
    text = backup(tree, "oss02")
    net_end = text.index("route:")
    (tmp_path / "oss02.yaml").write_text(text[net_end:] + NETWORK_DOWN, encoding="utf-8")
    d = diff(DEMO, tmp_path, "oss02")
    assert "+ net" not in d.output and "1 equal" in d.output, d.output
    assert "not in the dump, not compared: networks" in d.output
    assert "lnetctl could not show net: cannot get networks: Network is down" in d.output
    (tmp_path / "oss02.yaml").write_text(NETWORK_DOWN + NETWORK_DOWN)
    d = diff(DEMO, tmp_path, "oss02")
    assert "lnetctl showed nothing but errors: net: cannot get networks" in d.output, d.output


def test_the_reason_of_a_failed_host_is_the_line_that_says_what_failed(
    tree: Path, tmp_path: Path
) -> None:
    """failed.txt said "exit status 255: show:", and verify only "no dump of rtr20"."""
    out = tmp_path / "live"
    r = collect(out, "rtr[19-20]", fake_ssh(tmp_path, tmp_path))
    assert r.exit_code == 1
    reason = "exit status 255: net: cannot get networks: Network is down"
    assert f"rtr20\t{reason}\n" in (out / "failed.txt").read_text()
    v = CliRunner().invoke(main, ["verify", str(tree), "--live", str(out), "-q"])
    assert (
        "no dump of rtr20 (router in lnetctl/rtr20.yaml): nothing proved for it (lnetgen "
        f"collect failed: {reason})"
    ) in v.output, v.output


@pytest.mark.parametrize(
    ("err", "line"),
    [
        (NETWORK_DOWN.encode(), "net: cannot get networks: Network is down"),
        (
            b"Warning: Permanently added 'x' (ECDSA) to the list of known hosts.\r\n"
            b"bash: lnetctl: command not found\n",
            "bash: lnetctl: command not found",
        ),
        (b"\n show:\n", "show:"),
        (b"ssh: connect to host x port 22: No route to host\n", "ssh: connect to host x port "),
        (b"y" * 5000, "y" * 200),
    ],
)
def test_first_line(err: bytes, line: str) -> None:
    got = _first_line(err)
    assert got is not None and got.startswith(line) and len(got) <= 200
