"""Our Ansible variables against the public role they are named after.

``stackhpc/ansible-role-lustre`` writes ``/etc/lnet.conf`` from ``templates/lnet.conf.j2``.
``tests/fixtures/contracts/ansible-role-lustre-lnet.conf.j2`` encodes that template's variable
contract (the same variable accesses, the same YAML keys; the role file and commit it was read
from are named in it).  For every shipped site, every router, every server and every client
class (with each client's own address) must render there into valid YAML whose NIs are the
host's NIDs and whose routes, buffers and globals are exactly those of lnetgen's own
``lnetctl/`` file.  No network: the contract is in the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from lnetgen import nodes
from lnetgen.api import Generated, generate
from lnetgen.emit import ansible as ans

SITES = Path(__file__).resolve().parent.parent / "sites"
CONTRACT = Path(__file__).resolve().parent / "fixtures" / "contracts"
SHIPPED = sorted(p.name for p in SITES.glob("*.yaml"))


@cache
def contract() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(CONTRACT)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    return env.get_template("ansible-role-lustre-lnet.conf.j2")


def _resolve(value: Any, host: dict[str, Any]) -> Any:
    """Ansible templates string values lazily with the host's variables; do the same."""
    if isinstance(value, str) and "{{" in value:
        env = jinja2.Environment(undefined=jinja2.StrictUndefined)
        return env.from_string(value).render(**host)
    if isinstance(value, dict):
        return {k: _resolve(v, host) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, host) for v in value]
    return value


def _net(name: str) -> str:
    return str(nodes.parse_net(name))


def _routes(doc: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [
        (_net(r["net"]), r["gateway"], int(r["hop"]), int(r["priority"]))
        for r in doc.get("route") or []
    ]


def _nis(doc: dict[str, Any]) -> list[tuple[str, list[str], dict[str, Any], dict[str, Any]]]:
    out = []
    for net in doc.get("net") or []:
        for ni in net["local NI(s)"]:
            ifaces = [ni["interfaces"][k] for k in sorted(ni["interfaces"])]
            out.append(
                (
                    _net(net["net type"]),
                    ifaces,
                    ni.get("tunables") or {},
                    ni.get("lnd tunables") or {},
                )
            )
    return out


def _hosts_and_files(gen: Generated) -> list[tuple[str, dict[str, Any], str]]:
    """(host, its variables as Ansible resolves them, lnetgen's lnetctl file for it): every
    router and server, and for each client class its first, middle and last member."""
    files = {f.path: f.content for f in gen.files}
    inv = yaml.safe_load(files["ansible/inventory.yml"])["all"]["children"]
    lnetctl = {}
    for f in gen.files:
        if f.format == "lnetctl":
            for name in nodes.expand(f.hosts):
                lnetctl[name] = f.content
    out = []
    for path, text in sorted(files.items()):
        parts = path.split("/")
        if len(parts) < 4:
            continue
        if parts[1] == "host_vars":
            out.append((parts[2], yaml.safe_load(text), lnetctl[parts[2]]))
        elif parts[1] == "group_vars" and parts[2] != "all":
            members = {
                name: hv
                for pattern, hv in inv["lnet_clients"]["children"][parts[2]]["hosts"].items()
                for name in nodes.expand(nodes.from_ansible(pattern))
            }
            names = list(members)
            for name in dict.fromkeys([names[0], names[len(names) // 2], names[-1]]):
                host = dict(yaml.safe_load(text), **(members[name] or {}))
                out.append((name, host, lnetctl[name]))
    return out


@cache
def _generated(site: str) -> Generated:
    return generate(str(SITES / site), formats="lnetctl,ansible")


@pytest.mark.parametrize("site", SHIPPED)
def test_role_template_renders_every_host_into_lnetgens_routes(site: str) -> None:
    assert check_hosts(_generated(site)) > 0


def check_hosts(gen: Generated) -> int:
    """Render the contract for every host of ``gen`` and compare; the number of hosts."""
    clients = gen.site.clients
    nids = dict(zip(clients.names, clients.nids, strict=True))
    checked = 0
    for host, raw, ours_text in _hosts_and_files(gen):
        hv = _resolve(raw, raw)
        text = contract().render(**hv)
        theirs = yaml.safe_load(text)  # invalid YAML (e.g. "- nid: @gni0") fails here
        ours = yaml.safe_load(ours_text)
        assert _routes(theirs) == _routes(ours), host
        assert [(n, i) for n, i, _, _ in _nis(theirs)] == [(n, i) for n, i, _, _ in _nis(ours)], (
            host
        )
        assert [(t, lt) for _, _, t, lt in _nis(theirs)] == [
            (t, lt) for _, _, t, lt in _nis(ours)
        ], host
        theirs_nids = [
            str(nodes.parse_nid(ni["nid"])) for net in theirs["net"] for ni in net["local NI(s)"]
        ]
        assert all("@" in n and n.split("@")[0] for n in theirs_nids), (host, theirs_nids)
        if host in nids:  # a client: its own NID, from its own address
            assert theirs_nids == [nids[host]], host
        assert bool(theirs.get("routing")) == bool(ours.get("routing")), host
        assert (theirs.get("global") or {}) == (ours.get("global") or {}), host
        if "buffers" in ours:
            assert {k: theirs["buffers"][k] for k in ours["buffers"]} == ours["buffers"], host
        checked += 1
    return checked


def test_every_client_host_carries_its_own_address() -> None:
    """Each client host of the inventory has the address of its own NID (what ``ip`` of its
    class resolves to), and nothing else differs per host."""
    gen = _generated("demo.yaml")
    site = gen.site
    files = {f.path: f.content for f in gen.files}
    inv = yaml.safe_load(files["ansible/inventory.yml"])["all"]["children"]
    got = {
        name: hv[ans.ADDRESS_VAR]
        for grp in inv["lnet_clients"]["children"].values()
        for name, hv in grp["hosts"].items()
    }
    want = {
        n: nid.rpartition("@")[0]
        for n, nid in zip(site.clients.names, site.clients.nids, strict=True)
    }
    assert got == want
