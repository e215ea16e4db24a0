"""Router rules the kernel never applies.  The kernel applies a UDSP rule with ``dst`` and
``rte`` only with the preferred-list action, which only ``lnetctl udsp add`` without
``--priority`` makes: the ``udsp:`` block with ``action: {priority: 1}`` lnetgen once wrote into
lnet.conf (and diff's ``lnetctl udsp add ... --priority 1``) made dead rules.  Here: generate
writes working rules (a script, none in lnet.conf), diff replaces dead rules and takes a
working one (no ``action`` in ``lnetctl udsp show``) as equal, verify reports dead ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner, Result

from lnetgen.cli import main

SITES = Path(__file__).resolve().parent.parent / "sites"


def _run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def _tree(tmp: Path) -> tuple[Path, Path]:
    site = tmp / "demo-udsp.yaml"
    site.write_text(
        (SITES / "demo.yaml").read_text() + '\nlustre: {version: "2.15.6", udsp: true}\n'
    )
    out = tmp / "out"
    r = _run(["generate", str(site), "-s", "nearest-neighbor", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return site, out


def _strip_udsp(text: str) -> str:
    """The lnetctl YAML without a ``udsp:`` block (printed last)."""
    return text.split("\nudsp:\n", 1)[0].rstrip("\n") + "\n"


def _old_tree(out: Path, action: str) -> tuple[Path, list[tuple[str, str]]]:
    """``out`` made into what an older lnetgen deployed for its first client class: the
    class's rules in its lnet.conf's ``udsp:`` block (``action`` their action lines), no UDSP
    script.  Returns the class's lnetctl file and its rules (dst, rte)."""
    cls = sorted((out / "lnetctl").glob("clients-*.yaml"))[0]
    rules = _rules(out, cls)
    text = _strip_udsp(cls.read_text()) + "udsp:\n"
    for i, (dst, rte) in enumerate(rules):
        text += f'    - idx: {i}\n      dst: {dst}\n      rte: "{rte}"\n{action}'
    cls.write_text(text)
    rel = f"udsp/{cls.stem}.sh"
    (out / rel).unlink(missing_ok=True)
    m = json.loads((out / "manifest.json").read_text())
    m["files"] = [f for f in m["files"] if f["path"] != rel]
    (out / "manifest.json").write_text(json.dumps(m))
    return cls, rules


def _rules(out: Path, cls: Path) -> list[tuple[str, str]]:
    """The rules (dst, rte) the plan wants for the class of ``cls``, from the generated tree
    (the script, or the lnetctl YAML of older versions)."""
    sh = out / "udsp" / cls.name.replace(".yaml", ".sh")
    if sh.exists():
        add = r"^lnetctl udsp add --dst (\S+) --rte '?([^'\s]+)'?$"
        found = re.findall(add, sh.read_text(), re.M)
    else:
        found = re.findall(r"dst: (\S+)\n\s+rte: \"?([^\"\n]+)\"?\n", cls.read_text())
    assert found
    return [(d, r) for d, r in found]


def test_generate_writes_working_rules_and_no_udsp_block(tmp_path: Path) -> None:
    _site, out = _tree(tmp_path)
    yamls = sorted((out / "lnetctl").glob("*.yaml"))
    assert not any("udsp" in f.read_text() for f in yamls)
    scripts = sorted((out / "udsp").glob("*.sh"))
    assert scripts
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"] if f["format"] == "udsp"}
    assert set(listed) == {f"udsp/{s.name}" for s in scripts}
    for s in scripts:
        text = s.read_text()
        assert "--priority" not in text.replace("priority action", "")
        assert "\nlnetctl udsp del --idx -1\nlnetctl udsp add --dst " in text
        assert "ExecStartPost=/bin/sh /etc/lnet-udsp.sh" in text
        assert listed[f"udsp/{s.name}"]["role"] == "client"
    readme = (out / "README.txt").read_text()
    assert "UDSP ROUTER RULES" in readme and "after the import" in readme
    assert "    udsp/" in readme


def test_diff_replaces_a_dead_rule_with_a_working_one(tmp_path: Path) -> None:
    """What a site that deployed the older output runs: rules with a priority action.  diff
    removes them and adds them again without --priority, and says why."""
    site, out = _tree(tmp_path)
    _cls, rules = _old_tree(out, "      action:\n          priority: 1\n")
    r = _run(["diff", str(site), "-s", "nearest-neighbor", "--live", str(out), "--plan-changes"])
    assert r.exit_code == 1, r.output
    for i, (dst, rte) in enumerate(rules):
        assert f"- udsp --dst {dst} --rte {rte} --priority 1 (idx {i})" in r.output
        assert f"+ udsp --dst {dst} --rte {rte}\n" in r.output
        assert f"lnetctl udsp add --dst {dst} --rte {rte}'" in r.output  # no --priority
    assert f"lnetctl udsp del --idx {len(rules) - 1}" in r.output
    assert "is never applied" in r.output


def test_diff_takes_a_working_rule_as_planned(tmp_path: Path) -> None:
    """``lnetctl udsp show`` prints a working router rule without ``action``: equal to the
    plan's rule, nothing to change."""
    site, out = _tree(tmp_path)
    _old_tree(out, "")
    r = _run(["diff", str(site), "-s", "nearest-neighbor", "--live", str(out)])
    assert r.exit_code == 0 and "live state equals the plan" in r.output, r.output


def test_verify_reports_a_dead_rule_at_its_line(tmp_path: Path) -> None:
    _site, out = _tree(tmp_path)
    cls, _rules_of_cls = _old_tree(out, "      action:\n          priority: 1\n")
    line = cls.read_text().splitlines().index("    - idx: 0") + 1
    r = _run(["verify", str(out)])
    assert "V-UDSP-DEAD" in r.output, r.output
    assert f"{cls}:{line}:" in r.output
    assert r.exit_code == 0  # the routes' priorities still choose the same gateways


def test_verify_reads_the_rules_from_the_scripts(tmp_path: Path) -> None:
    """A rule of a script that prefers no gateway of the class is found, at its line."""
    _site, out = _tree(tmp_path)
    sh = sorted((out / "udsp").glob("*.sh"))[0]
    lines = sh.read_text().splitlines()
    k = next(i for i, t in enumerate(lines) if t.startswith("lnetctl udsp add"))
    lines[k] = re.sub(r"--rte \S+", "--rte 999@gni", lines[k])
    sh.write_text("\n".join(lines) + "\n")
    r = _run(["verify", str(out)])
    assert "V-UDSP-NO-ROUTE" in r.output, r.output
    assert f"{sh}:{k + 1}:" in r.output


def test_an_unreadable_script_is_an_input_finding(tmp_path: Path) -> None:
    _site, out = _tree(tmp_path)
    sh = sorted((out / "udsp").glob("*.sh"))[0]
    sh.write_text(sh.read_text() + "rm -rf /\n")
    n = len(sh.read_text().splitlines())
    r = _run(["verify", str(out)])
    assert r.exit_code == 1 and f"{sh}:{n}:" in r.output and "Traceback" not in r.output, r.output
