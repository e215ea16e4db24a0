"""Our Ansible variables against the public role they are named after.

``stackhpc/ansible-role-lustre`` writes ``/etc/lnet.conf`` from ``templates/lnet.conf.j2``.
Its variable contract, as read from that file (commit a7f4f9c, 2021-12-13), is restated here
in Python (``role_lnet_conf``), not copied: for every shipped site, every router, every server
and every client class (with each client's own address) must give valid YAML whose NIs are the
host's NIDs and whose routes, buffers and globals are exactly those of lnetgen's own
``lnetctl/`` file.

With ``LNETGEN_ANSIBLE_ROLE_LUSTRE`` naming a checkout of the role, the same comparison also
runs through the role's own template (skipped otherwise: the role is not on PyPI or Debian,
and the tests do not reach the network).
"""

from __future__ import annotations

import os
from collections.abc import Callable
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
SHIPPED = sorted(p.name for p in SITES.glob("*.yaml"))
ROLE_ENV = "LNETGEN_ANSIBLE_ROLE_LUSTRE"
# The role's defaults when lustre_lnet_routing_buffers leaves a size out.
ROLE_BUFFER_DEFAULTS = {"tiny": 2048, "small": 16384, "large": 1024}


def role_lnet_conf(hv: dict[str, Any]) -> str:
    """``/etc/lnet.conf`` as the role's template writes it from host variables ``hv``.

    The accesses the template makes, each a way our variables can break it:

    * ``lustre_lnet_lnetctl_networks`` (optional): net -> list of NIs; each NI prints
      ``nid: {ip}@{net}`` (``ip`` is always read, so an NI without it prints ``@net``),
      ``interfaces`` as ``index: name`` lines, and ``tunables`` / ``lnd_tunables`` (optional
      mappings) as ``key: value`` lines under ``tunables:`` / ``lnd tunables:``;
    * ``lustre_lnet_lnetctl_routes`` (optional): net -> list of routes, ``gateway`` always,
      ``hop`` and ``priority`` only when defined;
    * ``lustre_lnet_routing_enabled`` (truthiness) prints ``routing: - enable: 1`` and, when
      ``lustre_lnet_routing_buffers`` is defined, ``buffers:`` with tiny/small/large (role
      defaults for a missing size);
    * ``lustre_lnet_lnetctl_globals`` (optional mapping) printed under ``global:``.

    Values are printed with ``str``, as Jinja does; nothing is quoted.
    """
    out = ["---"]
    nets = hv.get("lustre_lnet_lnetctl_networks")
    if nets is not None:
        out.append("net:")
        for network, nis in nets.items():
            out += [f"    - net type: {network}", "      local NI(s):"]
            for ni in nis:
                out += [f"        - nid: {ni['ip']}@{network}", "          interfaces:"]
                out += [f"              {i}: {name}" for i, name in enumerate(ni["interfaces"])]
                for key, label in (("tunables", "tunables"), ("lnd_tunables", "lnd tunables")):
                    if key in ni:
                        out.append(f"          {label}:")
                        out += [f"              {k}: {v}" for k, v in ni[key].items()]
    routes = hv.get("lustre_lnet_lnetctl_routes")
    if routes is not None:
        out.append("route:")
        for network, rts in routes.items():
            for r in rts:
                out += [f"    - net: {network}", f"      gateway: {r['gateway']}"]
                out += [f"      {k}: {r[k]}" for k in ("hop", "priority") if k in r]
    if hv.get("lustre_lnet_routing_enabled"):
        out += ["routing:", "    - enable: 1"]
        buffers = hv.get("lustre_lnet_routing_buffers")
        if buffers is not None:
            out.append("buffers:")
            out += [f"    {k}: {buffers.get(k, d)}" for k, d in ROLE_BUFFER_DEFAULTS.items()]
    globals_ = hv.get("lustre_lnet_lnetctl_globals")
    if globals_ is not None:
        out.append("global:")
        out += [f"    {k}: {v}" for k, v in globals_.items()]
    return "\n".join(out) + "\n"


@cache
def _role_template(root: str) -> jinja2.Template:
    """The role's own ``templates/lnet.conf.j2`` from a checkout (Ansible's defaults:
    trim_blocks; the file's ``#jinja2:`` header asks for lstrip_blocks)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(root, "templates")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    return env.get_template("lnet.conf.j2")


def _real_role(hv: dict[str, Any]) -> str:
    root = os.environ[ROLE_ENV]
    return _role_template(root).render(ansible_managed="Ansible managed", **hv)


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
def test_role_contract_renders_every_host_into_lnetgens_routes(site: str) -> None:
    assert check_hosts(_generated(site)) > 0


@pytest.mark.skipif(
    not os.environ.get(ROLE_ENV),
    reason=f"{ROLE_ENV} does not name a checkout of stackhpc/ansible-role-lustre",
)
@pytest.mark.parametrize("site", SHIPPED)
def test_role_own_template_renders_every_host_into_lnetgens_routes(site: str) -> None:
    assert check_hosts(_generated(site), _real_role) > 0


def test_contract_catches_an_ni_without_ip() -> None:
    """The defect the contract exists for: a client NI with no ``ip`` gives ``nid: @gni``."""
    hv = {"lustre_lnet_lnetctl_networks": {"gni": [{"interfaces": ["ipogif0"]}]}}
    with pytest.raises(KeyError):
        role_lnet_conf(hv)
    hv["lustre_lnet_lnetctl_networks"]["gni"][0]["ip"] = ""  # what Ansible renders for none
    with pytest.raises(yaml.YAMLError):  # "- nid: @gni": '@' cannot start a plain scalar
        yaml.safe_load(role_lnet_conf(hv))


def check_hosts(gen: Generated, render: Callable[[dict[str, Any]], str] = role_lnet_conf) -> int:
    """Render every host of ``gen`` through ``render`` and compare with lnetgen's own lnetctl
    file; the number of hosts checked."""
    clients = gen.site.clients
    nids = dict(zip(clients.names, clients.nids, strict=True))
    checked = 0
    for host, raw, ours_text in _hosts_and_files(gen):
        hv = _resolve(raw, raw)
        text = render(hv)
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
