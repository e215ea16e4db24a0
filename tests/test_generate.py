"""lnetgen generate: golden trees for demo, modprobe strings parsed back with the kernel
grammar, manifest coverage, atomic write-if-changed output.

Regenerate the golden trees with ``LNETGEN_REGEN=1 pytest tests/test_generate.py``; on a
mismatch the test writes ``<file>.actual`` beside the expected file.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lnetgen import nodes, routestr
from lnetgen.api import generate, write_output
from lnetgen.cli import main
from lnetgen.solve import strategy_names

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")
GOLDEN = ROOT / "tests" / "cases" / "golden"
REGEN = os.environ.get("LNETGEN_REGEN") == "1"


def _tree(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): p.read_text()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.name.endswith(".actual")
    }


@pytest.mark.parametrize("strategy", strategy_names())
def test_demo_golden_tree(strategy: str, tmp_path: Path) -> None:
    gen = generate(DEMO, strategy)
    got = {f.path: f.content for f in gen.files}
    # the site path inside plan/manifest is not in the content; the digest is of the content
    case = GOLDEN / f"demo-{strategy}"
    if REGEN:
        if case.exists():
            for p in case.rglob("*"):
                if p.is_file():
                    p.unlink()
        for rel, text in got.items():
            dest = case / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
    expected = _tree(case)
    mismatched = []
    for rel, text in got.items():
        if expected.get(rel) != text:
            mismatched.append(rel)
            actual = case / (rel + ".actual")
            actual.parent.mkdir(parents=True, exist_ok=True)
            actual.write_text(text)
    assert sorted(expected) == sorted(got), "file sets differ"
    assert not mismatched, f"differs from golden (see .actual files): {mismatched[:5]}"


@pytest.mark.parametrize("strategy", strategy_names())
def test_modprobe_routes_describe_the_same_routes_as_yaml_and_plan(strategy: str) -> None:
    gen = generate(DEMO, strategy)
    files = {f.path: f for f in gen.files}
    plan_routes = {cc.name: cc.routes for cc in gen.plan.client_classes}
    plan_routes.update(gen.plan.routes_for_server())
    checked = 0
    for path, f in files.items():
        if not path.startswith("modprobe/"):
            continue
        name = path.removeprefix("modprobe/").removesuffix(".conf")
        line = next(ln for ln in f.content.splitlines() if ln.startswith("options lnet"))
        params = dict(_params(line))
        assert len(params.get("routes", "")) <= routestr.MODULE_PARAM_MAX
        kernel = sorted(routestr.parse_routes(params.get("routes", "")))
        doc = yaml.safe_load(files[f"lnetctl/{name}.yaml"].content)
        from_yaml = sorted(
            routestr.KRoute(r["net"], r["gateway"], r["hop"], r["priority"])
            for r in doc.get("route", [])
        )
        from_plan = sorted(
            routestr.KRoute(r.net, r.gateway, r.hop, r.priority) for r in plan_routes.get(name, ())
        )
        assert kernel == from_yaml == from_plan, name
        nets = [n for n, _ in routestr.parse_networks(params["networks"])]
        assert nets == [n["net type"] for n in doc["net"]]
        checked += 1
    assert checked == len([p for p in files if p.startswith("lnetctl/")])


def _params(line: str) -> list[tuple[str, str]]:
    out = []
    rest = line.removeprefix("options lnet ").strip()
    while rest:
        key, _, rest = rest.partition("=")
        if rest.startswith('"'):
            value, _, rest = rest[1:].partition('"')
        else:
            value, _, rest = rest.partition(" ")
        out.append((key.strip(), value))
        rest = rest.strip()
    return out


@pytest.mark.parametrize("strategy", strategy_names())
def test_manifest_lists_every_host_once_per_host_format(strategy: str) -> None:
    gen = generate(DEMO, strategy)
    manifest = json.loads(next(f.content for f in gen.files if f.path == "manifest.json"))
    site_hosts = (
        set(gen.site.clients.names)
        | {r.name for r in gen.site.routers}
        | {s.name for s in gen.site.servers}
    )
    for fmt in ("lnetctl", "modprobe"):
        seen: Counter[str] = Counter()
        for entry in manifest["files"]:
            if entry["format"] == fmt:
                seen.update(nodes.expand(entry["hosts"]))
        assert set(seen) == site_hosts and set(seen.values()) == {1}, fmt
    assert {e["path"] for e in manifest["files"]} == {f.path for f in gen.files} - {"manifest.json"}


def test_lnetctl_yaml_layout() -> None:
    gen = generate(DEMO, "groups")
    files = {f.path: f.content for f in gen.files}
    router = files["lnetctl/rtr01.yaml"]
    doc = yaml.safe_load(router)
    assert doc["routing"] == {"enable": 1}
    assert next(n["net type"] for n in doc["net"]) == "gni"
    client = files["lnetctl/clients-gni.yaml"]
    assert client.index("\nnet:") < client.index("\nroute:")
    assert (
        "    - net type: gni\n      local NI(s):\n        - interfaces:\n              0: ipogif0\n"
        in client
    )
    first = client.splitlines()[0]
    assert first.startswith("# generated by lnetgen ") and "(strategy " in first
    assert "sha256" not in first  # provenance of the inventory is manifest.json's, not each file's
    for text in files.values():
        assert text.endswith("\n")


def test_oversized_modprobe_is_refused_or_skipped() -> None:
    site = str(ROOT / "sites" / "bluewaters.yaml")
    gen = generate(site, "groups", "lnetctl,routes")
    assert not [f for f in gen.files if f.format == "modprobe"]
    from lnetgen.diagnostics import InputError

    with pytest.raises(InputError) as exc:
        _ = generate(site, "groups", "lnetctl,modprobe").files  # rendering raises
    msg = exc.value.diagnostics[0].message
    assert "clients-gni" in msg and "bytes" in msg and "lnetctl/clients-gni.yaml" in msg
    auto = generate(site, "groups")
    assert auto.files and "modprobe" in auto.skipped
    assert any(w.code == "W-MODPROBE-SKIPPED" for w in auto.warnings)


def test_write_is_atomic_and_keeps_unchanged_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    gen = generate(DEMO, "groups")
    first = write_output(gen, str(out))
    assert len(first.written) == len(gen.files)
    inode = (out / "lnetctl" / "rtr01.yaml").stat().st_ino
    again = write_output(generate(DEMO, "groups"), str(out))
    assert again.written == () and len(again.unchanged) == len(gen.files)
    assert (out / "lnetctl" / "rtr01.yaml").stat().st_ino == inode
    other = write_output(generate(DEMO, "projection"), str(out))
    assert other.written and "plan.json" in other.written
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.lnetgen-")]


def test_refuses_to_replace_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root\n")
    res = CliRunner().invoke(main, ["generate", DEMO, "--out", str(tmp_path / "etc")])
    assert res.exit_code == 2  # a refused output is a usage error, not a finding
    assert "did not write" in res.output
    assert (tmp_path / "etc" / "passwd").read_text() == "root\n"


def test_cli_generate_and_bad_strategy(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["generate", DEMO, "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o" / "lnetctl" / "clients-gni.yaml").exists()
    res = runner.invoke(main, ["generate", DEMO, "-s", "nope", "--out", str(tmp_path / "p")])
    assert res.exit_code == 2 and "error[E-USAGE] --strategy: unknown strategy" in res.output
    assert not (tmp_path / "p").exists()
    assert "Traceback" not in res.output
