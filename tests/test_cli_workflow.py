"""How administrators use the CLI: solve -> review plan.json -> apply it with --plan; node sets
in; pasteable change steps; part of a site in diff; importing a real fabric; figures that agree;
files scripts read.  Each test names the defect it guards against.
"""

from __future__ import annotations

import csv
import json
import shlex
import shutil
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from lnetgen.cli import main
from lnetgen.diff import SERVER, DiffResult, Group, HostDiff, format_steps, plan_changes
from lnetgen.resources import schema_text

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sites" / "demo.yaml"
SPIDER = ROOT / "sites" / "spider.yaml"
WOLF = ROOT / "sites" / "wolf.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# ----------------------------------------------------------------------------- plan -> apply


@pytest.mark.parametrize("strategy", ["groups", "nearest-neighbor"])
def test_generate_from_a_reviewed_plan_writes_exactly_what_solving_writes(
    strategy: str, tmp_path: Path
) -> None:
    """generate always re-solved; now a reviewed plan.json is applied, byte for byte."""
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "-s", strategy, "--out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text(encoding="utf-8"))
    assert doc["format_version"] == 2
    jsonschema.validate(doc, json.loads(schema_text("plan.schema.json")))
    a, b = tmp_path / "a", tmp_path / "b"
    r = run("generate", str(DEMO), "--plan", str(plan), "--out", str(a), "--formats", "all")
    assert r.exit_code == 0, r.output
    assert (
        run("generate", str(DEMO), "-s", strategy, "--out", str(b), "--formats", "all").exit_code
        == 0
    )
    assert tree(a) == tree(b)


def test_a_stale_plan_is_refused_naming_what_changed(tmp_path: Path) -> None:
    """analyze/place only warned (W-PLAN-DIGEST) on a stale plan; generate/diff ignored plans."""
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "--out", str(plan)).exit_code == 0
    site = tmp_path / "demo.yaml"
    site.write_text(
        DEMO.read_text(encoding="utf-8").replace("ip: 10.10.0.5,", "ip: 10.10.0.99,"), "utf-8"
    )
    out = tmp_path / "out"
    for args in (
        ["generate", str(site), "--plan", str(plan), "--out", str(out)],
        ["diff", str(site), "--plan", str(plan), "--live", str(plan)],
        ["analyze", str(site), "--plan", str(plan)],
        ["place", "osts", str(site), "--plan", str(plan), "--client", "nid00001"],
    ):
        r = run(*args)
        assert r.exit_code == 2, r.output
        assert (
            "error[E-PLAN-STALE] $.inventory_digest: the plan was solved from another " in r.output
        )
        assert "NID addresses changed: rtr05" in r.output and "--force" in r.output
    assert not out.exists()
    r = run("generate", str(site), "--plan", str(plan), "--out", str(out), "--force")
    assert r.exit_code == 0 and "warning[W-PLAN-STALE]" in r.output


def test_a_format_1_plan_is_still_applied_byte_for_byte(tmp_path: Path) -> None:
    """Format 2 folds the client route tables into route sets; a plan.json written before
    (each class listing its whole table) is read as the same plan."""
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "-s", "nearest-neighbor", "--out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text(encoding="utf-8"))
    sets = doc.pop("route_sets")
    for c in doc["client_classes"]:
        c["routes"] = [r for i in c.pop("route_sets") for r in sets[i]["routes"]]
    doc["format_version"] = 1
    plan.write_text(json.dumps(doc), encoding="utf-8")
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("generate", str(DEMO), "--plan", str(plan), "--out", str(a)).exit_code == 0
    assert run("generate", str(DEMO), "-s", "nearest-neighbor", "--out", str(b)).exit_code == 0
    assert tree(a) == tree(b)


def test_a_plan_of_another_format_version_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "--out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text(encoding="utf-8"))
    for version in (None, 3, True, "2"):
        if version is None:
            del doc["format_version"]
        else:
            doc["format_version"] = version
        plan.write_text(json.dumps(doc), encoding="utf-8")
        r = run("analyze", str(DEMO), "--plan", str(plan))
        assert r.exit_code == 2 and "error[E-PLAN-VERSION] $.format_version" in r.output


def test_a_plan_that_is_not_a_file_is_refused_at_once(tmp_path: Path) -> None:
    """--plan on a named pipe waited for a writer for ever, and --plan /dev/zero read a GiB
    (2.2 GB resident) before it was refused."""
    import os

    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        r = run("analyze", str(DEMO), "--plan", path)
        assert r.exit_code == 2 and "error[E-PLAN] $: not a regular file" in r.output, r.output


# ----------------------------------------------------------------------------- node sets in


def test_unknown_fail_names_are_counted_not_all_printed() -> None:
    """--fail 'rtr[1-999999]' printed every unknown name: a 10.9 MB error line."""
    r = run("analyze", str(DEMO), "--fail", "rtr[1-999999]", "--workload", "none")
    assert r.exit_code == 2 and len(r.output) < 400, r.output[:400]
    assert "--fail 'rtr1', 'rtr2', " in r.output and " and 999,978 more: not a router" in r.output


def test_node_sets_are_accepted_where_names_are(tmp_path: Path) -> None:
    """--fail 'rtr[01-02]' and --oss 'oss[01-02]' / 'oss01,oss02' were refused."""
    one = run("analyze", str(DEMO), "--fail", "rtr01", "--fail", "rtr02", "--format", "json")
    both = run("analyze", str(DEMO), "--fail", "rtr[01-02]", "--format", "json")
    assert one.exit_code == both.exit_code and one.stdout == both.stdout
    assert json.loads(both.stdout)["failure"]["failed"] == ["rtr01", "rtr02"]
    outs = {
        run("place", "clients", str(DEMO), *oss, "--per-oss", "2", "--format", "json").stdout
        for oss in (
            ["--oss", "oss01", "--oss", "oss02"],
            ["--oss", "oss[01-02]"],
            ["--oss", "oss01,oss02"],
        )
    }
    assert len(outs) == 1
    assert [p["server"] for p in json.loads(outs.pop())["placement"]["per_oss"]] == [
        "oss01",
        "oss02",
    ]


# ----------------------------------------------------------------------------- diff


def test_plan_changes_are_pasteable_clush_lines(tmp_path: Path) -> None:
    """--plan-changes printed '[oss[01-03]]' headers and did not say what needs an outage."""
    out = tmp_path / "out"
    assert run("generate", str(DEMO), "--out", str(out)).exit_code == 0
    site = tmp_path / "demo.yaml"
    site.write_text(
        DEMO.read_text(encoding="utf-8").replace("ip: 10.10.0.1,", "ip: 10.10.0.77,"), "utf-8"
    )
    r = run("diff", str(site), "--live", str(out), "--plan-changes")
    assert r.exit_code == 1
    steps = r.stdout.split("# step 1:", 1)[1].split("\n", 1)[1]
    commands = [ln for ln in steps.splitlines() if ln and not ln.startswith("#")]
    assert commands
    for line in commands:
        argv = shlex.split(line)
        assert argv[:2] == ["clush", "-w"] and len(argv) == 4 and argv[3].startswith("lnetctl ")
    assert (
        "clush -w 'oss[01-03]' 'lnetctl route add --net gni --gateway 10.10.0.77@o2ib100"
        in r.stdout
    )
    assert "# oss[01-03] (3 hosts): live" in r.stdout
    doc = json.loads(
        run("diff", str(site), "--live", str(out), "--plan-changes", "--format", "json").stdout
    )
    # the router is drained first (live: its nets keep other gateways), then its own address
    # change: an outage of the router, no clush line; the rest runs live
    drain, readdress, *rest = doc["steps"]
    assert drain["hosts"] == readdress["hosts"] == "rtr01"
    assert drain["live"] and drain["clush"] == ["clush -w rtr01 'lnetctl set routing 0'"]
    assert not readdress["live"] and not readdress["clush"]
    assert rest and all(s["live"] and s["clush"] for s in rest)


def test_a_server_nid_change_is_an_outage() -> None:
    d = HostDiff(SERVER, nids=(("o2ib100", ("10.10.1.1@o2ib100",), "10.10.1.9@o2ib100"),))
    steps = plan_changes(DiffResult("s", "x", "p", groups=[Group("oss01", 1, d)]))
    assert steps[0].outage and "lctl replace_nids" in steps[0].outage
    text = format_steps(steps, DiffResult("s", "x", "p"))
    assert "# oss01 (1 host): file system outage: " in text and "writeconf" in text


def test_diff_on_part_of_a_site(tmp_path: Path) -> None:
    """One host's dump reported the other 129 hosts missing; export.yaml became host 'export'."""
    out = tmp_path / "out"
    assert run("generate", str(DEMO), "--out", str(out)).exit_code == 0
    one = out / "lnetctl" / "rtr01.yaml"
    r = run("diff", str(DEMO), "--live", str(one))
    assert r.exit_code == 0 and "1 host compared: 1 equal, 0 differ; 0 missing" in r.output
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    for h in ("rtr01", "rtr02", "oss01"):
        shutil.copy(out / "lnetctl" / f"{h}.yaml", dumps / f"{h}.yaml")
    r = run("diff", str(DEMO), "--live", str(dumps), "--hosts", "rtr[01-02],oss01")
    assert (
        r.exit_code == 0 and "3 hosts compared: 3 equal, 0 differ; 0 missing, 0 unknown" in r.output
    )
    r = run("diff", str(DEMO), "--live", str(dumps), "--hosts", "rtr[01-03]")
    assert r.exit_code == 1 and "0 missing" not in r.output and "1 missing" in r.output
    export = tmp_path / "export.yaml"
    shutil.copy(out / "lnetctl" / "oss01.yaml", export)
    assert "unknown" in run("diff", str(DEMO), "--live", str(export)).output
    r = run("diff", str(DEMO), "--live", str(export), "--host", "oss01")
    assert r.exit_code == 0 and "1 equal" in r.output
    r = run("diff", str(DEMO), "--live", str(export), "--host", "rtr01")
    assert r.exit_code == 1  # oss01's state is not rtr01's
    r = run("diff", str(DEMO), "--live", str(dumps), "--host", "rtr01")
    assert r.exit_code == 2 and "error[E-USAGE] --host" in r.output


# ----------------------------------------------------------------------------- fabric


@pytest.mark.parametrize(("site", "leaves"), [(DEMO, 6), (SPIDER, 48)])
def test_leaf_modules_without_hosts_survive_an_import(
    site: Path, leaves: int, tmp_path: Path
) -> None:
    """demo's core1/L03 and 16 of spider's leaf modules were dropped as 'above the spines'."""
    net = tmp_path / "fabric.net"
    assert run("fabric", "export", str(site), "--out", str(net)).exit_code == 0
    r = run("fabric", "import", "ibnetdiscover", str(net))
    assert r.exit_code == 0 and "above the spines" not in r.output, r.output
    assert r.stdout.count("{name: L") == leaves
    if site == DEMO:  # host-less like the rest of its line cards: 12 host ports, 12 uplinks
        assert "- {name: L03, ports: 12, uplinks: 12, guid: '0x024903b524d95162'}" in r.stdout


def test_a_yaml_file_is_not_ibnetdiscover_output() -> None:
    r = run("fabric", "import", "ibnetdiscover", str(DEMO))
    assert r.exit_code == 2
    assert r.output.count("error[") == 1 and "this is not ibnetdiscover output" in r.output


def test_fabric_check_keep_relative_and_both_busiest_uplinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not all(shutil.which(t) for t in ("opensm", "ibsim", "dump_fts")):
        pytest.skip("OpenSM, ibsim or infiniband-diags not installed")
    monkeypatch.chdir(tmp_path)
    # baseline: every router with every server, so routes cross the spines of both switches
    r = run("fabric", "check", str(DEMO), "-s", "baseline", "--keep", "kept")
    assert r.exit_code in (0, 1), r.output
    assert (tmp_path / "kept").is_dir()
    assert "worst router->server leaf uplink against its best case: " in r.output
    assert "most routes on one router->server leaf uplink: " in r.output
    doc = json.loads(run("fabric", "check", str(DEMO), "-s", "baseline", "--format", "json").stdout)
    (fab,) = doc["fabrics"]
    assert fab["candidates"] and fab["candidates"][0]["forward"]["most_routes"]["routes"] > 0
    assert fab["advice"].startswith("fabric storage-ib: ") and fab["written"] == "none"
    assert fab["plan_strategy"] == "baseline"


# ----------------------------------------------------------------------------- figures, files


def test_solve_says_what_its_router_load_counts() -> None:
    """solve said 'router load 24.0-48.0 clients per router' where analyze says 96."""
    r = run("solve", str(DEMO), "-s", "groups")
    assert "24.0-48.0 clients per router as LNet spreads them (a client with k" in r.output
    assert "analyze and report count every client routed through a router" in r.output


def test_place_prints_the_max_hops_the_json_has() -> None:
    """'max 3' in text where the JSON said 3.333."""
    args = ["place", "clients", str(WOLF), "--oss", "lustre1-oss01"]
    doc = json.loads(run(*args, "--format", "json").stdout)
    (oss,) = doc["placement"]["per_oss"]
    assert f"max {oss['max_hops']:.2f}" in run(*args).output


def test_routes_csv_header_is_the_first_line_and_every_text_file_has_the_header(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    assert run("generate", str(DEMO), "--out", str(out)).exit_code == 0
    with (out / "routes" / "clients.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and set(rows[0]) == {
        "set",
        "client_net",
        "count",
        "net",
        "gateway",
        "hop",
        "priority",
        "why",
    }
    for rel, data in tree(out).items():
        if rel.endswith((".json", ".csv")):
            continue  # JSON has no comments; CSV starts with its columns (provenance: manifest)
        first = data.decode().split("\n", 1)[0]
        assert "generated by lnetgen " in first, rel


@pytest.mark.parametrize("strategy", ["nearest-neighbor", "round-robin"])
def test_route_csvs_give_every_client_its_table(strategy: str, tmp_path: Path) -> None:
    """routes/clients.csv lists each route set once; with client_sets.csv (who uses which set)
    every client's table is exactly the one its lnetctl file carries."""
    from lnetgen import nodes
    from lnetgen.api import solve_site

    out = tmp_path / "out"
    assert run("generate", str(DEMO), "-s", strategy, "--out", str(out)).exit_code == 0
    with (out / "routes" / "client_sets.csv").open(encoding="utf-8", newline="") as fh:
        members = {r["set"]: set(nodes.expand(r["members"])) for r in csv.DictReader(fh)}
    with (out / "routes" / "clients.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    plan = solve_site(str(DEMO), strategy)[1]
    listed = sum(len(cc.routes) for cc in plan.client_classes)
    # folded: nearest-neighbor's classes share their sets (round-robin's do not, on the demo)
    assert len(rows) < listed if strategy == "nearest-neighbor" else len(rows) <= listed
    for cc in plan.client_classes:
        want = sorted((r.net, r.gateway, r.hop, r.priority) for r in cc.routes)
        for name in nodes.expand(cc.members):
            got = sorted(
                (r["net"], r["gateway"], int(r["hop"]), int(r["priority"]))
                for r in rows
                if name in members[r["set"]]
            )
            assert got == want, name


def test_generate_json_says_what_was_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = json.loads(run("generate", str(DEMO), "--out", str(out), "--format", "json").stdout)
    again = json.loads(run("generate", str(DEMO), "--out", str(out), "--format", "json").stdout)
    assert first["written"] and not first["unchanged"] and not again["written"]
    assert sorted(again["unchanged"]) == sorted(first["written"])


def test_a_route_set_that_mixes_nets_is_refused(tmp_path: Path) -> None:
    """A route set is one net's routes; a hand-edited plan that breaks it is not a plan."""
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "--out", str(plan)).exit_code == 0
    doc = json.loads(plan.read_text(encoding="utf-8"))
    doc["route_sets"][0]["routes"][0]["net"] = "o2ib999"
    plan.write_text(json.dumps(doc), encoding="utf-8")
    r = run("analyze", str(DEMO), "--plan", str(plan))
    assert r.exit_code == 2 and "route_sets[0]" in r.output, r.output


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ('"site": "demo"', '"site": null', "$.site"),
        ('"hop": 1', '"hop": "1"', ".hop"),
        ('"priority": 0', '"priority": -5', ".priority"),
    ],
)
def test_a_hand_edited_plan_is_located_not_a_traceback(
    tmp_path: Path, old: str, new: str, where: str
) -> None:
    """A plan with a wrong type or value gave a traceback wherever the value was first used
    (a null name, a hop written as text) or passed analyze and failed generate (priority
    -5): it is checked against schemas/plan.schema.json when read."""
    plan = tmp_path / "plan.json"
    assert run("solve", str(DEMO), "--out", str(plan)).exit_code == 0
    text = plan.read_text(encoding="utf-8")
    assert old in text
    plan.write_text(text.replace(old, new, 1), encoding="utf-8")
    for cmd in (["analyze", str(DEMO), "--workload", "none"], ["generate", str(DEMO)]):
        out = ["--out", str(tmp_path / "o")] if cmd[0] == "generate" else []
        r = run(*cmd, "--plan", str(plan), *out)
        assert r.exit_code == 2 and "error[E-PLAN]" in r.output and where in r.output, r.output
    plan.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    r = run("analyze", str(DEMO), "--plan", str(plan))
    assert r.exit_code == 2 and "nested too deeply" in r.output, r.output


@pytest.mark.parametrize("value", ["nan", "inf", "1e309", "1e-320", "0"])
def test_a_rate_option_must_be_a_finite_positive_number(value: str) -> None:
    """nan and inf passed x>0 and put NaN and Infinity, which are not JSON, into the output."""
    r = run("analyze", str(DEMO), "--workload", "none", "--link-mb-s", value, "--format", "json")
    assert r.exit_code == 2 and "--link-mb-s" in r.output, r.output
    assert "NaN" not in r.output and "Infinity" not in r.output


def test_compare_runs_each_strategy_named_once() -> None:
    r = run("compare", str(DEMO), "--workload", "none", "--strategies", "groups,groups,groups")
    assert r.exit_code == 0, r.output
    assert sum(line.split()[:1] == ["groups"] for line in r.output.splitlines()) == 1, r.output
    r = run("compare", str(DEMO), "--workload", "none", "--strategies", ",")
    assert r.exit_code == 2 and "--strategies: ',' is empty" in r.output, r.output


def test_setstripe_lines_quote_the_path() -> None:
    """--path '$(id)' was printed bare into an lfs setstripe line a user would paste into a
    shell."""
    r = run(
        "place", "osts", str(DEMO), "--fs", "scratch", "--client", "nid00001", "--path", "$(id)"
    )
    assert r.exit_code == 0 and "lfs setstripe -c 1 -i 0 '$(id)'" in r.output, r.output
    # the demo gives no OST rate, so no stripe advice: Spider's widow1 gets lines, per pool
    spider = str(DEMO.parent / "spider.yaml")
    r = run("advise", "stripes", spider, "--fs", "widow1", "--path", "a b; rm -rf /")
    assert r.exit_code == 0 and "'a b; rm -rf /.g01'" in r.output, r.output
    assert " a b; rm" not in r.output
