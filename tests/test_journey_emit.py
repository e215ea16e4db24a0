"""Reviewers' journeys: what ``generate``'s emitters say about an inventory is located in it
(file:line:col and the entry's path, never ``$`` without a line), and ``validate`` says it
first.

* W-NO-GUID (hosts left out of the OpenSM guid files) and W-MODPROBE-TARGET (modprobe files
  without routes) follow from the inventory alone: the inventory check gives them, at the host's
  entry and at the ``lustre:`` release, for every command;
* W-MODPROBE-SKIPPED, W-ANSIBLE-NO-MODPROBE and E-ANSIBLE-NAMES follow from the plan:
  ``validate``'s dry solve runs the same checks on the default strategy's plan, ``generate``
  locates them the same way, as it does E-MODPROBE-IPV6 and E-MODPROBE-LENGTH (modprobe named
  in ``--formats``).
"""

from __future__ import annotations

import pytest
from conftest import CASES, ROOT

from lnetgen import routestr
from lnetgen.api import generate
from lnetgen.diagnostics import Diagnostic, InputError
from lnetgen.drysolve import dry_solve, dry_solve_acknowledged
from lnetgen.emit import ansible

DEMO = str(ROOT / "sites" / "demo.yaml")


def _at(diags: list[Diagnostic], code: str) -> list[tuple[str, int]]:
    return sorted((d.path, d.line) for d in diags if d.code == code)


def _generated(path: str, **kw: str) -> list[Diagnostic]:
    gen = generate(path, **kw)
    _ = gen.files  # the emitters' findings come while rendering
    return gen.warnings


def test_no_guid_is_at_each_host_and_validate_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "invalid" / "output-no-guid")
    _site, found = dry_solve("site.yaml")
    want = [("$.routers[1].storage", 46), ("$.servers[0]", 51)]
    assert _at(found, "W-NO-GUID") == want, [d.format() for d in found]
    warnings = _generated("site.yaml")
    assert _at(warnings, "W-NO-GUID") == want
    assert all(d.line > 0 for d in warnings), [d.format() for d in warnings]


def test_modprobe_target_is_at_the_release_that_decides_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(CASES / "invalid" / "output-modprobe-target")
    _site, found = dry_solve("site.yaml")
    assert _at(found, "W-MODPROBE-TARGET") == [("$.lustre.client", 6)]
    warnings = _generated("site.yaml", strategy="round-robin")
    assert _at(warnings, "W-MODPROBE-TARGET") == [("$.lustre.client", 6)]
    assert all(d.line > 0 for d in warnings), [d.format() for d in warnings]


def test_modprobe_skipped_for_ipv6_is_validated_and_located(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(CASES / "valid" / "ipv6-clients")
    site, found = dry_solve("site.yaml")
    assert site is not None
    at = [("$.routers[0].client", 26)]
    for code in ("W-MODPROBE-SKIPPED", "W-ANSIBLE-NO-MODPROBE"):
        assert _at(found, code) == at, [d.format() for d in found]
    warnings = _generated("site.yaml")
    for code in ("W-MODPROBE-SKIPPED", "W-ANSIBLE-NO-MODPROBE"):
        assert _at(warnings, code) == at
    assert all(d.line > 0 for d in warnings), [d.format() for d in warnings]
    with pytest.raises(InputError) as exc:
        _ = generate("site.yaml", formats="modprobe").files
    (d,) = exc.value.diagnostics
    assert (d.code, d.path, d.line) == ("E-MODPROBE-IPV6", "$.routers[0].client", 26)


def test_modprobe_over_the_length_limit_is_located(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client class's routes= over the limit: at the client group of its first host."""
    monkeypatch.setattr(routestr, "param_fits", lambda value: ";" not in value)
    _site, found = dry_solve(DEMO)
    (skip,) = [d for d in found if d.code == "W-MODPROBE-SKIPPED"]
    assert skip.path.startswith("$.clients[") and skip.line > 0, skip.format()
    with pytest.raises(InputError) as exc:
        _ = generate(DEMO, formats="lnetctl,modprobe").files
    (d,) = exc.value.diagnostics
    assert (d.code, d.path, d.line) == ("E-MODPROBE-LENGTH", skip.path, skip.line)


def test_ansible_group_collision_fails_validate_where_generate_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ansible, "group_name", lambda _name: ansible.ROUTERS)
    site, found = dry_solve(DEMO)
    bad = [d for d in found if d.code == "E-ANSIBLE-NAMES"]
    assert site is None and bad and all(d.severity == "error" for d in bad)
    assert all(d.path.startswith("$.clients[") and d.line > 0 for d in bad), [
        d.format() for d in bad
    ]
    with pytest.raises(InputError) as exc:
        _ = generate(DEMO, formats="ansible").files
    assert [(d.path, d.line) for d in exc.value.diagnostics] == [(d.path, d.line) for d in bad]


def test_advise_routers_on_a_dragonfly_says_what_the_site_lacks() -> None:
    """It said "needs a torus client side", naming neither the site's kind nor what to run."""
    from click.testing import CliRunner

    from lnetgen.cli.advise import routers_cmd

    r = CliRunner().invoke(routers_cmd, [str(CASES / "valid" / "dragonfly" / "site.yaml")])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "error[E-USAGE] SITE: advise routers needs a torus client side" in r.output
    assert "is a dragonfly (topology.kind: dragonfly)" in r.output
    assert "routers[].dragonfly" in r.output and "lnetgen analyze SITE" in r.output


def test_the_plans_modprobe_warnings_can_be_acknowledged(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site that deploys the lnetctl YAML on purpose (Spider's 4 KB routes, an IPv6 gateway)
    could not accept W-MODPROBE-SKIPPED and W-ANSIBLE-NO-MODPROBE: ``acknowledge:`` refused
    them (E-ACK-CODE) and validate and generate gave them on every run.  Acknowledged, validate
    lists them as such and generate no longer repeats them; an acknowledgement the plan does not
    bear out is said to be unused, as any other."""
    text = (CASES / "valid" / "ipv6-clients" / "site.yaml").read_text()
    ack = (
        "\nacknowledge:\n"
        "  - {code: W-MODPROBE-SKIPPED, reason: we deploy /etc/lnet.conf}\n"
        "  - {code: W-ANSIBLE-NO-MODPROBE, reason: the lnet role writes /etc/lnet.conf}\n"
    )
    monkeypatch.chdir(tmp_path)
    with open("site.yaml", "w", encoding="utf-8") as f:
        f.write(text + ack)
    site, found, acked = dry_solve_acknowledged("site.yaml")
    assert site is not None
    plan_codes = {"W-MODPROBE-SKIPPED", "W-ANSIBLE-NO-MODPROBE", "W-ACK-UNUSED"}
    assert not [d for d in found if d.code in plan_codes], [d.format() for d in found]
    assert _at(acked, "W-MODPROBE-SKIPPED") == [("$.routers[0].client", 26)]
    assert _at(acked, "W-ANSIBLE-NO-MODPROBE") == [("$.routers[0].client", 26)]
    assert not [d for d in _generated("site.yaml") if d.code in plan_codes]
    # the same entries on a site whose plan writes its modprobe files: unused
    demo = (ROOT / "sites" / "demo.yaml").read_text()
    with open("demo.yaml", "w", encoding="utf-8") as f:
        f.write(demo + ack)
    _site, found, acked = dry_solve_acknowledged("demo.yaml")
    assert acked == []
    unused = [d.message for d in found if d.code == "W-ACK-UNUSED"]
    assert sorted(m.split()[0] for m in unused) == ["W-ANSIBLE-NO-MODPROBE", "W-MODPROBE-SKIPPED"]
