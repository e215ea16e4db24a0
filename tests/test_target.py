"""The Lustre release of the hosts (inventory ``lustre:``) decides what generate writes."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

from lnetgen.api import Generated, generate, load_plan, render_files
from lnetgen.target import Targets, parse_version, targets

SITES = ROOT / "sites"


def _body(text: str) -> str:
    """A file without its first line (the header names the inventory's digest)."""
    return text.split("\n", 1)[1]


def _with_release(tmp: Path, site: str, lustre: str) -> str:
    """The shipped ``site`` with a ``lustre:`` section (before ``strategy:``)."""
    text = (SITES / f"{site}.yaml").read_text(encoding="utf-8")
    assert "\nstrategy:" in text
    path = tmp / f"{site}.yaml"
    if re.search(r"^lustre: ", text, re.M):  # the site states its own release: replace it
        text = re.sub(r"^lustre: .*$", f"lustre: {lustre}", text, count=1, flags=re.M)
    else:
        text = text.replace("\nstrategy:", f"\nlustre: {lustre}\nstrategy:", 1)
    path.write_text(text, "utf-8")
    return str(path)


@cache
def _demo(tmp: Path, lustre: str) -> Generated:
    gen = generate(_with_release(tmp, "demo", lustre), formats="lnetctl,modprobe,ansible")
    _ = gen.files
    return gen


def test_versions_parse_and_roles_override() -> None:
    assert parse_version("2.15.6") == (2, 15, 6) and parse_version("2.19.53") == (2, 19, 53)
    for bad in ("2", "2.x", "v2.15", "2.15.6.1.2"):
        with pytest.raises(ValueError):
            parse_version(bad)
    t = targets({"version": "2.15.6", "client": "2.20.0"})
    assert t.of("router") == (2, 15, 6) and t.of("client") == (2, 20, 0)
    assert t.kernel_routes("router") and not t.kernel_routes("client")
    assert Targets().kernel_routes("client")  # unknown: both paths
    assert t.describe() == "2.20.0 on clients; 2.15.6 on routers and servers"


def test_modprobe_loses_routes_and_forwarding_from_2_19_53(tmp_path: Path) -> None:
    old, new = _demo(tmp_path, '{version: "2.15.6"}'), _demo(tmp_path, '{version: "2.20.0"}')
    a = {f.path: f.content for f in old.files}
    b = {f.path: f.content for f in new.files}
    assert a.keys() == b.keys()
    for path in a:
        if path.startswith("lnetctl/"):
            assert _body(a[path]) == _body(b[path]), path  # the same whatever the release
        if path.startswith("modprobe/"):
            assert "routes=" in a[path] or "forwarding=" in a[path]
            assert "routes=" not in b[path] and "forwarding=" not in b[path], path
            assert 'networks="' in b[path]
    assert not [w for w in old.warnings if w.code == "W-MODPROBE-TARGET"]
    assert [w for w in new.warnings if w.code == "W-MODPROBE-TARGET"]
    assert "Lustre release: 2.15.6 on clients, routers and servers." in a["README.txt"]
    words = " ".join(b["README.txt"].split())
    assert "no longer parses routes= or forwarding=" in words
    assert "must therefore bring LNet up with lnet.service" in words


def test_ansible_module_vars_follow_the_release(tmp_path: Path) -> None:
    """The role writes the modprobe file from lustre_lnet_module_*: no routes or forwarding
    there either for hosts on 2.19.53 or later."""
    import yaml

    gen = _demo(tmp_path, '{version: "2.15.6", client: "2.20.0"}')
    for f in gen.files:
        if not f.path.endswith("/lnet.yml") or "/all/" in f.path:
            continue
        doc = yaml.safe_load(f.content)
        opts = doc.get("lustre_lnet_module_options", {})
        if doc["lnetgen_role"] == "client":
            assert "forwarding" not in opts and "lustre_lnet_module_routes" not in doc, f.path
        else:
            assert "forwarding" in opts, f.path


@pytest.mark.parametrize(
    ("site", "older"),
    [
        ("demo", "2.12.9"),
        ("spider", "2.12.9"),
        ("bluewaters", "2.12.9"),
        ("wolf", "2.12.9"),
        ("slingshot", "2.15.6"),  # kfi clients: kfilnd is not in 2.12
    ],
)
def test_every_shipped_site_generates_for_two_releases(
    site: str, older: str, tmp_path: Path
) -> None:
    """An older release and 2.20: the lnetctl YAML is the same, modprobe files keep their
    networks= and lose routes= and forwarding= -- so a site whose routes= was too long for a
    module parameter gets its modprobe files back on the newer release."""
    assert {p.stem for p in SITES.glob("*.yaml")} == {
        "demo",
        "spider",
        "bluewaters",
        "wolf",
        "slingshot",
    }, "a new shipped site joins this test"
    gens = {}
    for v in (older, "2.20.0"):
        s, plan, _ = load_plan(_with_release(tmp_path, site, f'{{version: "{v}"}}'))
        gens[v] = render_files(s, plan, ["lnetctl", "modprobe"], explicit=False)
    files = {v: {f.path: f.content for f in g.files} for v, g in gens.items()}
    old, new = files[older], files["2.20.0"]
    assert {p: _body(t) for p, t in old.items() if p.startswith("lnetctl/")} == {
        p: _body(t) for p, t in new.items() if p.startswith("lnetctl/")
    }
    new_mod = [p for p in new if p.startswith("modprobe/")]
    assert new_mod and all("routes=" not in new[p] for p in new_mod)
    if "modprobe" in gens[older].skipped:  # too long for a module parameter
        assert not any(p.startswith("modprobe/") for p in old)
    else:
        assert any("routes=" in old[p] for p in old if p.startswith("modprobe/"))


def test_the_role_writes_what_modprobe_has_on_a_mixed_site(tmp_path: Path) -> None:
    """The lnet role renders each host's modprobe file byte for byte from its variables when
    clients run 2.20 (no routes=, no forwarding=) and the rest 2.15."""
    from test_ansible import host_sources, role_render, vars_for

    gen = _demo(tmp_path, '{version: "2.15.6", client: "2.20.0"}')
    files = {f.path: f.content for f in gen.files}
    by_host = vars_for(gen)
    done: set[str] = set()
    for host, path in host_sources(gen, "modprobe").items():
        if path not in done:
            done.add(path)
            assert role_render(gen, "modprobe.conf.j2", by_host[host]) == files[path], path
    assert done == {p for p in files if p.startswith("modprobe/")}
