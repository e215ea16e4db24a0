"""Large NIDs (IPv6 on the tcp storage LND, Lustre 2.16+) and kfi client NIDs through
inventory, generate, verify and diff; what refuses them and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from lnetgen import nodes
from lnetgen.cli import main
from lnetgen.diagnostics import InputError
from lnetgen.inventory import load_site
from lnetgen.verify.declared import _split_nids

SITES = Path(__file__).resolve().parent.parent / "sites"
DEMO = (SITES / "demo.yaml").read_text()


def ipv6_demo(tmp: Path, lnd: str = "tcp", extra: str = "") -> Path:
    """The demo with every storage address IPv6 (10.10.x.y -> fd00::x:y) on ``lnd``."""
    text = re.sub(r"ip: 10\.10\.(\d+)\.(\d+)", r'ip: "fd00::\1:\2"', DEMO)
    text = text.replace("storage_lnd: o2ib", f"storage_lnd: {lnd}") + extra
    path = tmp / f"demo-ipv6-{lnd}.yaml"
    path.write_text(text)
    return path


def test_parse_nid_ipv6() -> None:
    assert str(nodes.parse_nid("FD00:0:0::5@tcp1")) == "fd00::5@tcp1"
    assert str(nodes.parse_nid("2001:db8::1@efa")) == "2001:db8::1@efa"
    with pytest.raises(nodes.NodeSyntaxError, match="IPv4 only"):
        nodes.parse_nid("fd00::5@o2ib")
    with pytest.raises(nodes.NodeSyntaxError, match="not an IPv6 address"):
        nodes.parse_nid("fd00:::5@tcp")
    nids = sorted(
        [nodes.parse_nid(t) for t in ("fd00::2@tcp", "10.0.0.9@tcp", "fd00::10@tcp")],
        key=nodes.Nid.sort_key,
    )
    assert [str(n) for n in nids] == ["10.0.0.9@tcp", "fd00::2@tcp", "fd00::10@tcp"]


def test_mount_and_mkfs_nid_lists_split_after_the_net() -> None:
    assert _split_nids("fd00::2:2@tcp201,fd00::2:2@tcp:fd00::3@tcp") == [
        "fd00::2:2@tcp201",
        "fd00::2:2@tcp",
        "fd00::3@tcp",
    ]
    assert _split_nids("10.0.0.1@o2ib,10.0.0.2@o2ib:26001@gni") == [
        "10.0.0.1@o2ib",
        "10.0.0.2@o2ib",
        "26001@gni",
    ]


def test_inventory_refuses_ipv6_where_lustre_cannot_take_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_site(str(ipv6_demo(tmp_path, "o2ib")))
    bad = [d for d in exc.value.diagnostics if d.code == "E-NID-IPV6"]
    assert bad and bad[0].path.endswith(".ip") and bad[0].line > 0
    with pytest.raises(InputError) as exc:
        load_site(str(ipv6_demo(tmp_path, "tcp", '\nlustre: {version: "2.15.6"}\n')))
    assert "E-NID-IPV6-TARGET" in {d.code for d in exc.value.diagnostics}
    site = load_site(str(ipv6_demo(tmp_path, "tcp", '\nlustre: {version: "2.16.1"}\n')))[0]
    assert {s.ip for s in site.servers} >= {"fd00::1:1"}


def test_two_spellings_of_one_address_are_one_address(tmp_path: Path) -> None:
    text = ipv6_demo(tmp_path).read_text()
    first = re.search(r'ip: "(fd00::[0-9:]+)"', text)
    assert first is not None
    spelled = first.group(1).replace("fd00::", "fd00:0:0::", 1)
    # a second host claims the first one's address in another spelling
    text = text.replace(f'ip: "{first.group(1)}"', f'ip: "{spelled}"', 1)
    second = re.findall(r'ip: "(fd00::[0-9:]+)"', text)[0]
    text = text.replace(f'ip: "{second}"', f'ip: "{first.group(1)}"', 1)
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_site(str(path))
    assert any("DUP" in d.code and "IP" in d.code for d in exc.value.diagnostics), [
        d.code for d in exc.value.diagnostics
    ]


@pytest.mark.parametrize("strategy", ["groups", "nearest-neighbor", "projection", "baseline"])
def test_ipv6_round_trip(tmp_path: Path, strategy: str) -> None:
    site = ipv6_demo(tmp_path)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["generate", str(site), "-s", strategy, "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "W-MODPROBE-SKIPPED" in r.output and "IPv6" in r.output
    assert not (out / "modprobe").exists()
    text = "".join(f.read_text() for f in (out / "lnetctl").glob("*.yaml"))
    assert "gateway: fd00::" in text or strategy == "baseline" or "@tcp" in text
    r = CliRunner().invoke(main, ["verify", str(out)])
    assert r.exit_code == 0 and "proved (0 error(s), 0 warning(s))" in r.output, r.output
    r = CliRunner().invoke(main, ["diff", str(site), "-s", strategy, "--live", str(out)])
    assert r.exit_code == 0 and "live state equals the plan" in r.output, r.output


def test_modprobe_asked_for_with_ipv6_is_an_error(tmp_path: Path) -> None:
    site = ipv6_demo(tmp_path)
    r = CliRunner().invoke(
        main, ["generate", str(site), "--formats", "modprobe", "--out", str(tmp_path / "o")]
    )
    # the same contract as a routes= over the length limit (E-MODPROBE-LENGTH): nothing written
    assert r.exit_code == 1 and "E-MODPROBE-IPV6" in r.output and "Traceback" not in r.output
    assert "nothing written" in r.output and not (tmp_path / "o").exists()


def test_kfi_client_nids_round_trip(tmp_path: Path) -> None:
    site = tmp_path / "kfi.yaml"
    site.write_text(DEMO.replace("gni", "kfi").replace("ipogif0", "hsn0"))
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["generate", str(site), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert "gateway: 201@kfi" in (out / "lnetctl" / "clients-kfi.yaml").read_text()
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0
    r = CliRunner().invoke(main, ["diff", str(site), "--live", str(out)])
    assert "live state equals the plan" in r.output, r.output


# ----------------------------------------------------------------------------- IPv6 clients

V6_CLIENTS = Path(__file__).resolve().parent / "cases" / "valid" / "ipv6-clients" / "site.yaml"


def v6_clients(tmp: Path, old: str = "", new: str = "") -> Path:
    """The IPv6-client case, with ``old`` replaced by ``new`` (once, and it must be there)."""
    text = V6_CLIENTS.read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp / "v6-clients.yaml"
    path.write_text(text)
    return path


def test_client_nids_by_rule_and_list_are_canonical() -> None:
    site = load_site(str(V6_CLIENTS))[0]
    nids = dict(zip(site.clients.names, site.clients.nids, strict=True))
    assert [nids[f"login{k}"] for k in range(1, 5)] == [
        "fd00:10::11@tcp",
        "fd00:10::12@tcp",
        "fd00:10::13@tcp",
        "fd00:10::14@tcp",
    ]
    assert nids["dtn02"] == "fd00:10::20@tcp"  # listed as FD00:10:0::20
    assert site.router("lnet1").client_nid == "fd00:10::1@tcp"


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        # a second spelling of a client's address is the same NID
        ('"fd00:10::5", "FD00:10:0::20"', '"fd00:10::5", "fd00:10:0:0::12"', "E-DUP-NID"),
        ('tcp, nid: {ip: "fd00:10::11"}', 'tcp, nid: {ip: "fd00:::11"}', "E-IP"),
        (
            'nid: {ip: "fd00:10::11"}',
            'nid: {ip: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"}',
            "E-NID-RULE",
        ),
        ('lustre: {version: "2.16.1"}', 'lustre: {version: "2.15.6"}', "E-NID-IPV6-TARGET"),
        (
            'lustre: {version: "2.16.1"}',
            'lustre: {version: "2.16.1", client: "2.15.6"}',
            "E-NID-IPV6-TARGET",
        ),
        (  # the servers answer the clients' IPv6 NIDs: they need large NIDs too
            'lustre: {version: "2.16.1"}',
            'lustre: {version: "2.16.1", server: "2.15.6"}',
            "E-NID-IPV6-TARGET",
        ),
    ],
)
def test_client_ipv6_problems(tmp_path: Path, old: str, new: str, code: str) -> None:
    with pytest.raises(InputError) as exc:
        load_site(str(v6_clients(tmp_path, old, new)))
    found = [d for d in exc.value.diagnostics if d.code == code]
    assert found and found[0].line > 0, [d.format() for d in exc.value.diagnostics]


def test_client_ipv6_on_an_ipv4_lnd_is_refused(tmp_path: Path) -> None:
    text = v6_clients(tmp_path).read_text().replace("tcp", "o2ib100").replace("eth0", "ib1")
    path = tmp_path / "o2ib.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_site(str(path))
    codes = {d.code for d in exc.value.diagnostics}
    # the rule, the list and the routers' NIDs: each says the LND is IPv4 only
    assert {"E-NID-IPV6", "E-NID"} <= codes, codes
    assert all("IPv4 only" in d.message for d in exc.value.diagnostics if "NID" in d.code)


def test_ipv6_clients_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["generate", str(V6_CLIENTS), "--out", str(out)])
    assert r.exit_code == 0, r.output
    # the clients' gateways are IPv6: no kernel routes= can carry them
    assert "W-MODPROBE-SKIPPED" in r.output and "fd00:10::1@tcp is IPv6" in r.output
    text = (out / "lnetctl" / "clients-tcp.yaml").read_text()
    assert "gateway: fd00:10::1@tcp" in text and "gateway: fd00:10::2@tcp" in text
    inv = (out / "ansible" / "inventory.yml").read_text()
    assert "lnetgen_nid_address: fd00:10::20" in inv
    r = CliRunner().invoke(main, ["verify", str(out)])
    assert r.exit_code == 0 and "proved (0 error(s), 0 warning(s))" in r.output, r.output
    r = CliRunner().invoke(main, ["diff", str(V6_CLIENTS), "--live", str(out)])
    assert r.exit_code == 0 and "live state equals the plan" in r.output, r.output


def test_diff_reads_a_client_export_with_an_ipv6_nid(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    dump = (
        "net:\n    - net type: tcp\n      local NI(s):\n        - nid: {nid}\n"
        "          interfaces:\n              0: eth0\n"
        "route:\n    - net: o2ib10\n      gateway: FD00:10::1@tcp\n      hop: 1\n"
        "      priority: 0\n    - net: o2ib11\n      gateway: fd00:10::2@tcp\n      hop: 1\n"
        "      priority: 0\nglobal:\n    drop_asym_route: 1\n"
    )
    (live / "login1.yaml").write_text(dump.format(nid="fd00:10:0::11@tcp"))
    (live / "login2.yaml").write_text(dump.format(nid="fd00:10::99@tcp"))
    r = CliRunner().invoke(
        main, ["diff", str(V6_CLIENTS), "--live", str(live), "--hosts", "login[1-2]"]
    )
    assert r.exit_code == 1, r.output
    # login1 shows its own NID in another spelling and the plan's routes: equal; login2 a
    # NID the inventory does not give it
    assert "1 equal, 1 differ" in r.output, r.output
    assert "! nid on tcp: live fd00:10::99@tcp, inventory fd00:10::12@tcp" in r.output


def test_ipv6_gateways_do_not_stop_modprobe_where_no_routes_are_written(tmp_path: Path) -> None:
    """On 2.19.53 and later no role gets routes=, so the IPv6 gateways never reach a modprobe
    file: each host still gets networks= and its tunables (the whole format was skipped)."""
    site = v6_clients(tmp_path, 'lustre: {version: "2.16.1"}', 'lustre: {version: "2.20.0"}')
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["generate", str(site), "--out", str(out)])
    assert r.exit_code == 0 and "W-MODPROBE-SKIPPED" not in r.output, r.output
    text = (out / "modprobe" / "clients-tcp.conf").read_text()
    assert 'networks="tcp(eth0)"' in text and "routes=" not in text
    assert "routes=" not in (out / "modprobe" / "home-oss1.conf").read_text()
    r = CliRunner().invoke(main, ["verify", str(out)])
    assert r.exit_code == 0 and "proved (0 error(s), 0 warning(s))" in r.output, r.output
