"""Ansible output: inventory and variables (stackhpc/ansible-role-lustre names), the lnet role,
and -- marked ``integration`` -- real ``ansible-playbook`` and ``ansible-inventory`` runs
proving the role writes exactly what ``lnetgen generate`` writes in ``lnetctl/`` and
``modprobe/``."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import nodes, routestr
from lnetgen.api import Generated, generate, render_files, write_output
from lnetgen.diagnostics import InputError
from lnetgen.emit import DEFAULT_FORMATS, REGISTRY
from lnetgen.emit import ansible as ans
from lnetgen.resources import data_dir
from lnetgen.solve import strategy_names

SITES = Path(__file__).resolve().parent.parent / "sites"
DEMO = str(SITES / "demo.yaml")
BLUEWATERS = SITES / "bluewaters.yaml"
FORMATS = "lnetctl,modprobe,ansible"
ROLE = "roles/lnet/templates"
LNET_CONF, MODPROBE_CONF = "etc/lnet.conf", "etc/modprobe.d/lnet.conf"
UDSP_SH, UDSP_DROP_IN = "etc/lnet-udsp.sh", "etc/systemd/system/lnet.service.d/lnetgen-udsp.conf"

#: Variables a vars file may set: stackhpc/ansible-role-lustre's, plus the role's own.
STACKHPC_VARS = {
    "lustre_lnet_routing_enabled",
    "lustre_lnet_lnetctl_networks",
    "lustre_lnet_lnetctl_routes",
    "lustre_lnet_module_networks",
    "lustre_lnet_module_routes",
    "lustre_lnet_module_options",
    "lustre_lnet_routing_buffers",
    "lustre_lnet_lnetctl_globals",
    "lustre_lnet_ko2iblnd_options",
}
OWN_VARS = {"lnetgen_role", "lnetgen_hosts", "lnetgen_lnd_module_options", "lnetgen_udsp_rules"}


@cache
def demo() -> Generated:
    return generate(DEMO, formats=FORMATS)


def files_of(gen: Generated) -> dict[str, str]:
    return {f.path: f.content for f in gen.files}


def ansible_files(gen: Generated) -> dict[str, str]:
    return {p[len("ansible/") :]: c for p, c in files_of(gen).items() if p.startswith("ansible/")}


def load(text: str) -> Any:
    return yaml.safe_load(text)


def inventory_groups(inv: dict[str, Any]) -> dict[str, list[str]]:
    """Group -> expanded host names, from our inventory.yml (Ansible ranges expanded)."""
    out: dict[str, list[str]] = {}

    def walk(name: str, node: dict[str, Any]) -> None:
        hosts = []
        for pattern in node.get("hosts") or {}:
            hosts.extend(nodes.expand(nodes.from_ansible(pattern)))
        out[name] = hosts
        for child, sub in (node.get("children") or {}).items():
            walk(child, sub or {})

    walk("all", inv["all"])
    return out


def host_sources(gen: Generated, fmt: str) -> dict[str, str]:
    """Host -> the ``fmt`` file (lnetctl, modprobe) lnetgen wrote for it."""
    out: dict[str, str] = {}
    for f in gen.files:
        if f.format == fmt and f.hosts:
            for name in nodes.expand(f.hosts):
                assert name not in out, f"{name} has two {fmt} files"
                out[name] = f.path
    return out


# ----------------------------------------------------------------------------- unit


def test_registered_and_in_default_set() -> None:
    assert REGISTRY["ansible"] is ans.emit
    assert "ansible" in DEFAULT_FORMATS


def test_inventory_groups_and_every_host_once() -> None:
    gen = demo()
    files = ansible_files(gen)
    groups = inventory_groups(load(files["inventory.yml"]))
    plan = gen.plan
    class_groups = {ans.group_name(cc.name): cc for cc in plan.client_classes}
    assert set(groups) == {"all", "lnet_clients", "lnet_routers", "lnet_servers", *class_groups}
    for grp, cc in class_groups.items():
        assert groups[grp] == nodes.expand(cc.members)
    assert sorted(groups["lnet_routers"]) == sorted(r.name for r in plan.routers)
    assert sorted(groups["lnet_servers"]) == sorted(s.name for s in plan.servers)
    # every host: exactly one class group, or exactly one host_vars directory
    in_class = Counter(h for g in class_groups for h in groups[g])
    host_vars = Counter(p.split("/")[1] for p in files if p.startswith("host_vars/"))
    assert set(in_class.values()) == {1} and set(host_vars.values()) == {1}
    assert not set(in_class) & set(host_vars)
    assert set(in_class) | set(host_vars) == set(host_sources(gen, "lnetctl"))
    assert sum(in_class.values()) + sum(host_vars.values()) == 96 + 20 + 14
    group_vars = {p.split("/")[1] for p in files if p.startswith("group_vars/")}
    assert group_vars == {"all", *class_groups}


def test_inventory_uses_ansible_range_syntax() -> None:
    text = ansible_files(demo())["inventory.yml"]
    assert "rtr[01:20]:" in text and "oss[01:12]:" in text
    for bracket in re.findall(r"\[([^\]]*)\]", text):
        assert re.fullmatch(r"[0-9a-z]+:[0-9a-z]+", bracket), bracket


def test_variables_names_and_shapes_match_plan() -> None:
    gen = demo()
    files = ansible_files(gen)
    plan = gen.plan
    server_routes = plan.routes_for_server()
    expect: dict[str, tuple[Any, ...]] = {}
    for cc in plan.client_classes:
        expect[f"group_vars/{ans.group_name(cc.name)}/lnet.yml"] = (
            "client",
            cc.members,
            [(cc.net, cc.interface)],
            cc.routes,
            False,
        )
    for r in plan.routers:
        expect[f"host_vars/{r.name}/lnet.yml"] = (
            "router",
            r.name,
            [(i.net, i.interface) for i in r.interfaces],
            (),
            True,
        )
    for s in plan.servers:
        expect[f"host_vars/{s.name}/lnet.yml"] = (
            "server",
            s.name,
            [(net, s.interface) for net in s.networks],  # storage net, then server net
            server_routes[s.name],
            False,
        )
    assert {p for p in files if p.endswith("/lnet.yml")} == set(expect)
    for path, (role, hosts, nis, routes, routing) in expect.items():
        doc = load(files[path])
        assert set(doc) <= STACKHPC_VARS | OWN_VARS, path
        assert doc["lnetgen_role"] == role and doc["lnetgen_hosts"] == hosts
        assert doc["lustre_lnet_routing_enabled"] is routing
        got_nis = [
            (nodes.canonical_net(net), iface)
            for net, items in doc["lustre_lnet_lnetctl_networks"].items()
            for item in items
            for iface in item["interfaces"]
        ]
        assert got_nis == nis
        got_routes = [
            (nodes.canonical_net(net), r["gateway"], r["hop"], r["priority"])
            for net, items in doc.get("lustre_lnet_lnetctl_routes", {}).items()
            for r in items
        ]
        assert got_routes == [(r.net, r.gateway, r.hop, r.priority) for r in routes]
        assert ("lustre_lnet_lnetctl_routes" in doc) == bool(routes)
        # keys spell net number 0 out, as stackhpc's lnet_routes module compares them
        for key in (
            *doc["lustre_lnet_lnetctl_networks"],
            *doc.get("lustre_lnet_lnetctl_routes", {}),
        ):
            assert re.fullmatch(r"[a-z0-9]*[a-z]\d+", key), key
        assert all(isinstance(v, str) for v in doc["lustre_lnet_module_networks"])
        assert all(isinstance(v, str) for v in doc.get("lustre_lnet_module_routes", []))
        # the demo sets no tunables; its plan is symmetric, so drop_asym_route is on everywhere
        assert doc["lustre_lnet_module_options"] == {
            "forwarding": "enabled" if routing else "disabled",
            "lnet_drop_asym_route": 1,
        }
        assert doc["lustre_lnet_lnetctl_globals"] == {"drop_asym_route": 1}
        # stackhpc's lnet.conf.j2 writes "nid: <ip>@<net>" for every NI: a client class's ip
        # refers to the per-host address in the inventory
        ips = [i["ip"] for v in doc["lustre_lnet_lnetctl_networks"].values() for i in v]
        if role == "client":
            assert ips == [ans.CLIENT_ADDRESS] * len(ips)
        else:
            assert all(ips) and ans.CLIENT_ADDRESS not in ips


def test_module_strings_join_back_to_modprobe_values() -> None:
    plan = demo().plan
    cc = plan.client_classes[0]
    doc = load(ansible_files(demo())[f"group_vars/{ans.group_name(cc.name)}/lnet.yml"])
    whole = routestr.format_routes(
        routestr.KRoute(r.net, r.gateway, r.hop, r.priority) for r in cc.routes
    )
    assert ans.ROUTES_SEP.join(doc["lustre_lnet_module_routes"]) == whole
    r = plan.routers[0]
    doc = load(ansible_files(demo())[f"host_vars/{r.name}/lnet.yml"])
    whole = routestr.format_networks([(i.net, i.interface) for i in r.interfaces])
    assert ans.NETWORKS_SEP.join(doc["lustre_lnet_module_networks"]) == whole


def test_header_and_static_role_files() -> None:
    gen = demo()
    files = ansible_files(gen)
    header = files["inventory.yml"].splitlines()[0].removeprefix("# ")
    assert load(files["group_vars/all/lnetgen.yml"]) == {"lnetgen_header": header}
    for rel, text in ans.static_files():  # the shipped file after the "generated by" line
        first, rest = files[rel].split("\n", 1)
        assert rest == text
        assert first == ("{# " + header + " #}" if rel.endswith(".j2") else f"# {header}")
    base = data_dir("templates") / "ansible"
    for rel in (
        "site.yml",
        "ansible.cfg",
        "roles/lnet/tasks/main.yml",
        "roles/lnet/defaults/main.yml",
        f"{ROLE}/lnet.conf.j2",
        f"{ROLE}/modprobe.conf.j2",
        f"{ROLE}/lnet-udsp.sh.j2",
        f"{ROLE}/lnet-udsp.conf.j2",
    ):
        assert files[rel].split("\n", 1)[1] == (base / rel).read_text(encoding="utf-8")
    tasks = load(files["roles/lnet/tasks/main.yml"])
    assert not any("notify" in t for t in tasks)  # handler-free
    assert not (base / "roles/lnet/handlers").exists()


def test_deterministic() -> None:
    a = ansible_files(generate(DEMO, formats="ansible"))
    b = ansible_files(generate(DEMO, formats="ansible"))
    assert a == b
    assert a == ansible_files(demo())  # independent of which other formats ran


def _regex_replace(value: str, pattern: str, repl: str) -> str:
    return re.sub(pattern, repl, value)


@cache
def role_env() -> jinja2.Environment:
    """The role's templates under plain Jinja2 with Ansible's template-module settings."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates") / "ansible" / ROLE)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["regex_replace"] = _regex_replace
    env.filters["bool"] = bool
    env.filters["quote"] = shlex.quote  # Ansible's quote filter
    defaults = data_dir("templates") / "ansible" / "roles" / "lnet" / "defaults" / "main.yml"
    env.globals.update(yaml.safe_load(defaults.read_text(encoding="utf-8")))  # role defaults
    return env


def role_render(gen: Generated, template: str, host_vars: dict[str, Any]) -> str:
    files = ansible_files(gen)
    values = dict(load(files["group_vars/all/lnetgen.yml"]))
    values.update(host_vars)
    return role_env().get_template(template).render(**values)


def vars_for(gen: Generated) -> dict[str, dict[str, Any]]:
    """Host -> its variables, the way Ansible would merge them (one source per host)."""
    files = ansible_files(gen)
    groups = inventory_groups(load(files["inventory.yml"]))
    out: dict[str, dict[str, Any]] = {}
    for path, text in files.items():
        parts = path.split("/")
        if parts[0] == "host_vars":
            out[parts[1]] = load(text)
        elif parts[0] == "group_vars" and parts[1] != "all":
            for host in groups[parts[1]]:
                out[host] = load(text)
    return out


@pytest.mark.parametrize("strategy", strategy_names())
def test_role_templates_reproduce_lnetgen_files(strategy: str) -> None:
    """Fast check of the same property the integration test proves with ansible-playbook,
    for every strategy (several client classes, servers on many nets)."""
    gen = generate(DEMO, strategy, formats=FORMATS)
    assert {p for p in files_of(gen) if p.startswith("ansible/group_vars/lnet_class_")} == {
        f"ansible/group_vars/{ans.group_name(cc.name)}/lnet.yml" for cc in gen.plan.client_classes
    }
    files = files_of(gen)
    by_host = vars_for(gen)
    for fmt, template in (("lnetctl", "lnet.conf.j2"), ("modprobe", "modprobe.conf.j2")):
        done: set[str] = set()
        for host, path in host_sources(gen, fmt).items():
            if path in done:  # one host per file is enough here
                continue
            done.add(path)
            assert role_render(gen, template, by_host[host]) == files[path], (host, path)
        assert done == {p for p in files if p.startswith(f"{fmt}/")}


def test_modprobe_skipped_leaves_module_vars_out(monkeypatch: pytest.MonkeyPatch) -> None:
    site, plan = demo().site, demo().plan
    monkeypatch.setattr(routestr, "param_fits", lambda value: ";" not in value)
    gen = render_files(site, plan, ["modprobe", "ansible"], explicit=False)
    assert not any(f.path.startswith("modprobe/") for f in gen.files)  # renders: skips known
    assert "modprobe" in gen.skipped
    assert any(w.code == "W-ANSIBLE-NO-MODPROBE" for w in gen.warnings)
    for path, text in ansible_files(gen).items():
        if path.endswith("/lnet.yml"):
            assert not any(k.startswith("lustre_lnet_module_") for k in load(text)), path
    # the same plan still yields module variables when modprobe fits
    monkeypatch.undo()
    ok = render_files(site, plan, ["ansible"], explicit=False)
    assert all(
        "lustre_lnet_module_networks" in load(t)
        for p, t in ansible_files(ok).items()
        if p.endswith("/lnet.yml")
    )


def test_group_name_collision_is_an_input_error() -> None:
    plan = demo().plan
    cc = plan.client_classes[0]
    first = nodes.expand(cc.members)
    a = dataclasses.replace(cc, name="x-y", members=nodes.fold(first[:10]), count=10)
    b = dataclasses.replace(cc, name="x_y", members=nodes.fold(first[10:]), count=len(first) - 10)
    bad = dataclasses.replace(plan, client_classes=(a, b))
    with pytest.raises(InputError, match="lnet_class_x_y"):
        _ = render_files(demo().site, bad, ["ansible"], explicit=False).files


def test_host_in_two_roles_is_an_input_error() -> None:
    plan = demo().plan
    cc = plan.client_classes[0]
    bad = dataclasses.replace(cc, members=nodes.fold([*nodes.expand(cc.members), "rtr01"]))
    with pytest.raises(InputError, match="rtr01"):
        _ = render_files(
            demo().site,
            dataclasses.replace(plan, client_classes=(bad,)),
            ["ansible"],
            explicit=False,
        ).files


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("clients-gni", "lnet_class_clients_gni"),
        ("clients-gni-1a2b3c4d", "lnet_class_clients_gni_1a2b3c4d"),
        ("c.x", "lnet_class_c_x"),
    ],
)
def test_group_name(name: str, group: str) -> None:
    assert ans.group_name(name) == group


@pytest.mark.parametrize(
    ("net", "key"),
    [
        ("gni", "gni0"),
        ("o2ib", "o2ib0"),
        ("o2ib0", "o2ib0"),
        ("o2ib100", "o2ib100"),
        ("tcp10", "tcp10"),
        ("bxi3f", "bxi3f0"),
    ],
)
def test_var_net(net: str, key: str) -> None:
    assert ans.var_net(net) == key


_ROLE_NET_RE = re.compile(r"^([a-z0-9]*[a-z])0$")  # as in the role's lnet.conf.j2


def test_role_net_regex_is_the_one_in_the_template() -> None:
    text = (data_dir("templates") / "ansible" / ROLE / "lnet.conf.j2").read_text()
    assert text.count("regex_replace('^([a-z0-9]*[a-z])0$', '\\\\1')") == 2


@given(st.sampled_from(sorted(nodes.LNDS)), st.integers(0, nodes.MAX_NET_NUMBER))
def test_role_prints_canonical_net_names(lnd: str, number: int) -> None:
    net = str(nodes.Net(lnd, number))
    assert _ROLE_NET_RE.sub(r"\1", ans.var_net(net)) == net


@given(
    st.one_of(
        st.text(alphabet="abcyYnNoOeEsStTrRuUfFlL0189_.-:[],", max_size=8),
        st.sampled_from(["yes", "No", "OFF", "null", "y", "n", "nid00042", "ib0", "a-b.c_d"]),
    )
)
def test_scalar_shortcut_writes_what_pyyaml_writes(text: str) -> None:
    """The plain-text shortcut of the vars writer never differs from ``yaml.dump``."""
    dumped = yaml.dump(text, Dumper=ans._Dumper, allow_unicode=True, width=1 << 30)
    assert ans._scalar_text(text) == dumped.removesuffix("\n").removesuffix("\n...").removesuffix(
        "\n"
    )


# ----------------------------------------------------------------------------- integration


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="session")
def ansible_bin() -> Path:
    """Directory holding ansible-playbook for this interpreter; installs ansible-core with pip
    into the test environment when it is missing."""
    bindir = Path(sys.executable).parent
    if not (bindir / "ansible-playbook").exists():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "ansible-core"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or not (bindir / "ansible-playbook").exists():
            pytest.skip(f"ansible-core could not be installed with pip: {proc.stderr[-500:]}")
    return bindir


@pytest.fixture
def ansible_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "ansible-home"
    home.mkdir()
    env = dict(os.environ)
    env.update(
        {
            "ANSIBLE_HOME": str(home),
            "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
            "ANSIBLE_REMOTE_TEMP": str(home / "remote"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_PIPELINING": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
            "LC_ALL": env.get("LC_ALL") or "C.UTF-8",
        }
    )
    env.pop("ANSIBLE_CONFIG", None)
    return env


def _recap(stdout: str) -> dict[str, dict[str, int]]:
    out = {}
    for m in re.finditer(
        r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+"
        r"failed=(\d+)",
        stdout,
        re.M,
    ):
        out[m.group(1)] = {
            "ok": int(m.group(2)),
            "changed": int(m.group(3)),
            "unreachable": int(m.group(4)),
            "failed": int(m.group(5)),
        }
    return out


def _playbook(
    bindir: Path, tree: Path, env: dict[str, str], root: Path, *extra: str, forks: int = 16
) -> dict[str, dict[str, int]]:
    cmd = [
        str(bindir / "ansible-playbook"),
        "-i",
        "inventory.yml",
        "site.yml",
        "-c",
        "local",
        "-f",
        str(forks),
        "-e",
        f"lnet_root={root}/{{{{ inventory_hostname }}}}",
        *extra,
    ]
    return _recap(_run(cmd, tree / "ansible", env).stdout)


@pytest.mark.integration
def test_playbook_writes_what_lnetgen_writes(
    ansible_bin: Path, ansible_env: dict[str, str], tmp_path: Path
) -> None:
    gen = demo()
    out = tmp_path / "out"
    write_output(gen, str(out))
    sources = {
        LNET_CONF: host_sources(gen, "lnetctl"),
        MODPROBE_CONF: host_sources(gen, "modprobe"),
    }
    hosts = sorted(sources[LNET_CONF])
    assert len(hosts) == 130 and sorted(sources[MODPROBE_CONF]) == hosts
    plan = gen.plan
    sample = [
        nodes.expand(plan.client_classes[0].members)[0],
        plan.routers[0].name,
        plan.servers[0].name,
    ]

    # --check against hosts that have nothing yet: succeeds, writes nothing
    empty = tmp_path / "empty"
    recap = _playbook(ansible_bin, out, ansible_env, empty, "--check", "--limit", ",".join(sample))
    assert sorted(recap) == sorted(sample)
    assert all(r["failed"] == 0 and r["changed"] == 2 for r in recap.values())
    assert not empty.exists()

    # the real run: every router and server (one host_vars file each) and the first, middle
    # and last member of every client class (members share one group_vars file, so the rest
    # would only repeat the same template run: ~0.3 s of Ansible CPU per module call).
    # That every client resolves to its class is proved from the inventory above and by
    # ansible-inventory on bluewaters.
    picked = {r.name for r in plan.routers} | {s.name for s in plan.servers}
    for cc in plan.client_classes:
        members = nodes.expand(cc.members)
        picked |= {members[0], members[len(members) // 2], members[-1]}
    hosts = sorted(picked)
    root = tmp_path / "root"
    for host in hosts:
        (root / host / "etc" / "modprobe.d").mkdir(parents=True)
    recap = _playbook(ansible_bin, out, ansible_env, root, "--limit", ",".join(hosts))
    assert sorted(recap) == hosts
    assert all(
        r == {"ok": 4, "changed": 2, "unreachable": 0, "failed": 0} for r in recap.values()
    ), recap
    for dest, by_host in sources.items():
        for host in hosts:
            got = (root / host / dest).read_bytes()
            assert got == (out / by_host[host]).read_bytes(), (host, dest)

    # idempotent: a second run, in check mode, finds nothing to change
    recap = _playbook(ansible_bin, out, ansible_env, root, "--check", "--limit", ",".join(sample))
    assert all(r["changed"] == 0 and r["failed"] == 0 for r in recap.values()), recap


@pytest.mark.integration
def test_playbook_without_modprobe_variables(
    ansible_bin: Path, ansible_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, plan = demo().site, demo().plan
    monkeypatch.setattr(routestr, "param_fits", lambda value: False)
    gen = render_files(site, plan, ["lnetctl", "modprobe", "ansible"], explicit=False)
    out = tmp_path / "out"
    write_output(gen, str(out))
    assert "modprobe" in gen.skipped
    sample = [
        nodes.expand(plan.client_classes[0].members)[0],
        plan.routers[0].name,
        plan.servers[0].name,
    ]
    root = tmp_path / "root"
    for host in sample:
        (root / host / "etc" / "modprobe.d").mkdir(parents=True)
    recap = _playbook(ansible_bin, out, ansible_env, root, "--limit", ",".join(sample))
    assert all(r["changed"] == 1 and r["failed"] == 0 for r in recap.values()), recap
    lnetctl = host_sources(gen, "lnetctl")
    for host in sample:
        assert not (root / host / MODPROBE_CONF).exists()
        assert (root / host / LNET_CONF).read_bytes() == (out / lnetctl[host]).read_bytes()


@pytest.mark.integration
@pytest.mark.skipif(not BLUEWATERS.exists(), reason="sites/bluewaters.yaml is not there yet")
def test_bluewaters_inventory_loads(
    ansible_bin: Path, ansible_env: dict[str, str], tmp_path: Path
) -> None:
    gen = generate(str(BLUEWATERS), formats="ansible")
    out = tmp_path / "out"
    write_output(gen, str(out))
    site = gen.site
    # --export keeps group variables on the groups; without it every one of the 25,712
    # clients would be printed with its class's full route table
    proc = _run(
        [str(ansible_bin / "ansible-inventory"), "-i", "inventory.yml", "--list", "--export"],
        out / "ansible",
        ansible_env,
    )
    inv = json.loads(proc.stdout)
    members: dict[str, set[str]] = {
        g: set(v.get("hosts", [])) for g, v in inv.items() if g != "_meta"
    }
    everyone = set().union(*members.values())
    n_clients = len(site.clients.names)
    assert n_clients == 25_712
    assert len(everyone) == n_clients + len(site.routers) + len(site.servers)
    assert members["lnet_routers"] == {r.name for r in site.routers}
    assert members["lnet_servers"] == {s.name for s in site.servers}
    classes = [g for g in members if g.startswith(ans.CLASS_PREFIX)]
    assert sum(len(members[g]) for g in classes) == n_clients
    assert set().union(*(members[g] for g in classes)) == set(site.clients.names)
    # routers and servers have host_vars files; each client carries only its NID address
    hostvars = inv["_meta"]["hostvars"]
    assert set(hostvars) == members["lnet_routers"] | members["lnet_servers"] | set(
        site.clients.names
    )
    addr = {
        n: nid.rpartition("@")[0]
        for n, nid in zip(site.clients.names, site.clients.nids, strict=True)
    }
    assert {n: hostvars[n] for n in addr} == {n: {ans.ADDRESS_VAR: a} for n, a in addr.items()}
    for g in classes:
        assert "lustre_lnet_lnetctl_routes" in inv[g]["vars"]
    assert inv["all"]["vars"]["lnetgen_header"].startswith("generated by lnetgen")


@pytest.mark.integration
@pytest.mark.parametrize("case", ["multirail", "udsp"])
def test_playbook_writes_rails_and_udsp_rules(
    ansible_bin: Path, ansible_env: dict[str, str], tmp_path: Path, case: str
) -> None:
    """Real Ansible renders what the role-render tests compare: a Multi-Rail router and server
    (several NIs under one net type) and a client class with UDSP rules."""
    if case == "multirail":
        site = SITES.parent / "tests" / "cases" / "valid" / "multirail" / "site.yaml"
        gen = generate(str(site))
    else:
        site = tmp_path / "demo-udsp.yaml"
        site.write_text(
            (SITES / "demo.yaml").read_text() + '\nlustre: {version: "2.15.6", udsp: true}\n'
        )
        gen = generate(str(site), "nearest-neighbor")
    out = tmp_path / "out"
    write_output(gen, str(out))
    sources = host_sources(gen, "lnetctl")
    hosts = sorted(
        {r.name for r in gen.plan.routers[:2]}
        | {s.name for s in gen.plan.servers[:2]}
        | {nodes.expand(cc.members)[0] for cc in gen.plan.client_classes[:2]}
    )
    root = tmp_path / "root"
    for host in hosts:
        (root / host / "etc" / "modprobe.d").mkdir(parents=True)
    recap = _playbook(ansible_bin, out, ansible_env, root, "--limit", ",".join(hosts))
    assert sorted(recap) == hosts and all(r["failed"] == 0 for r in recap.values()), recap
    texts = {h: (root / h / LNET_CONF).read_text() for h in hosts}
    for host in hosts:
        assert texts[host] == (out / sources[host]).read_text(), host
    if case == "multirail":
        assert (
            "              0: ib1\n        - interfaces:\n              0: ib2\n" in texts["rtr1"]
        )
    else:
        assert not any("udsp" in t for t in texts.values())  # lnetctl import cannot carry them
        scripts = {f.hosts: f.path for f in gen.files if f.format == "udsp"}
        with_rules = 0
        for host in hosts:
            sh, drop_in = root / host / UDSP_SH, root / host / UDSP_DROP_IN
            rel = next((p for m, p in scripts.items() if host in nodes.expand(m)), None)
            assert sh.exists() == drop_in.exists() == (rel is not None), host
            if rel is not None:
                with_rules += 1
                assert sh.read_text() == (out / rel).read_text(), host
                assert "ExecStartPost=/bin/sh /etc/lnet-udsp.sh\n" in drop_in.read_text()
        assert with_rules
