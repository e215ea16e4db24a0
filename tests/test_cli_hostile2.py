"""Option values and inputs a reviewer found accepted or misreported (second sweep): a stripe
limit above Lustre's, a ``--path`` with control characters or a bidi override, an unreadable
SITE called a usage error, an empty ``diff --host``/``--hosts``, ``advise stripes --fs`` not
named, and an alias bomb across the sections of a live dump called an undefined alias."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lnetgen.cli import main
from lnetgen.diagnostics import InputError
from lnetgen.live import LiveParseError, parse_dump

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "sites" / "demo.yaml")
LIVE = str(ROOT / "tests" / "fixtures" / "live" / "demo")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _refused(r: Result, option: str) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2, r.output
    assert f"error[E-USAGE] {option}: " in r.output, r.output


@pytest.mark.parametrize("value", ["2001", "99999"])
def test_a_stripe_limit_above_lustre_s_is_refused(value: str) -> None:
    r = run("advise", "stripes", DEMO, "--fs", "scratch", "--max-stripe", value)
    _refused(r, "--max-stripe")
    assert "LOV_MAX_STRIPE_COUNT" in r.output
    assert "setstripe" not in r.output


def test_the_library_refuses_it_too() -> None:
    from lnetgen.advise import MAX_STRIPE, advise_stripes
    from lnetgen.api import solve_site

    site, plan, _ = solve_site(DEMO)
    with pytest.raises(InputError) as info:
        advise_stripes(site, plan, "scratch", max_stripe=MAX_STRIPE + 1)
    assert info.value.diagnostics[0].path == "--max-stripe"
    assert (
        run("advise", "stripes", DEMO, "--fs", "scratch", "--max-stripe", str(MAX_STRIPE)).exit_code
        == 0
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("evil\u202eFILE", "'evil\\u202eFILE'"),
        ("a\x07b\x08c", "'a\\x07b\\x08c'"),
        ("x\x1b[2Jy", "'x\\x1b[2Jy'"),
        ("tab\there", "'tab\\there'"),
        ("new\nline", "'new\\nline'"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [
        ("place", "osts", DEMO, "--client", "nid00001", "--fs", "scratch"),
        ("advise", "stripes", DEMO, "--fs", "scratch"),
    ],
    ids=["place osts", "advise stripes"],
)
def test_a_path_with_a_control_character_is_refused_escaped(
    command: tuple[str, ...], value: str, shown: str
) -> None:
    r = run(*command, "--path", value)
    _refused(r, "--path")
    assert shown in r.output
    assert value not in r.output
    assert not any(c in r.output for c in "\u202e\x07\x08\x1b\t")


def test_a_printable_path_of_any_script_is_kept() -> None:
    r = run(
        "place", "osts", DEMO, "--client", "nid00001", "--fs", "scratch", "--path", "données/é 1"
    )
    assert r.exit_code == 0, r.output
    assert "'données/é 1'" in r.output


def _unreadable(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """``path`` unreadable to this user, as os.access reports it (root reads every file)."""
    real = os.access

    def access(p: object, mode: int, *args: object, **kwargs: object) -> bool:
        if str(p) == str(path) and mode & os.R_OK:
            return False
        return real(p, mode, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)


def test_an_unreadable_site_is_e_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user who may not read SITE (os.access says so; root reads every file)."""
    site = tmp_path / "x.yaml"
    shutil.copy(DEMO, site)
    _unreadable(monkeypatch, site)
    for command in ("validate", "solve", "analyze"):
        r = run(command, str(site))
        assert r.exit_code == 2, r.output
        assert f"{site}: error[E-FILE] $: cannot be read (permission denied)" in r.output


@pytest.mark.skipif(sys.platform != "linux", reason="chmod and setpriv semantics")
def test_an_unreadable_site_is_e_file_for_a_real_user(tmp_path: Path) -> None:
    """The same without a patch: root runs lnetgen without the capabilities that let it read
    any file (setpriv); any other user as they are."""
    site = tmp_path / "x.yaml"
    shutil.copy(DEMO, site)
    site.chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root without setpriv reads every file")
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*prefix, sys.executable, "-m", "lnetgen", "validate", str(site)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert p.returncode == 2, p.stderr
    assert "error[E-FILE]" in p.stderr and "E-USAGE" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    ("option", "value"),
    [("--host", ""), ("--host", " "), ("--hosts", ""), ("--hosts", " "), ("--hosts", ",")],
)
def test_an_empty_diff_host_is_refused_before_solving(
    option: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lnetgen.api

    def solving(*args: object, **kwargs: object) -> None:
        raise AssertionError("solved before refusing the option")

    monkeypatch.setattr(lnetgen.api, "load_plan", solving)
    _refused(run("diff", DEMO, "--live", LIVE, f"{option}={value}"), option)


def test_advise_stripes_names_fs() -> None:
    r = run("advise", "stripes", DEMO, "--fs", "nope")
    _refused(r, "--fs")
    assert "no file system 'nope'" in r.output


BOMB = "global:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"s{i}:\n    a: &a{i} [{', '.join([f'*a{i - 1}' if i > 1 else '*a'] * 10)}]\n"
    for i in range(1, 9)
)


def test_an_alias_bomb_across_sections_is_called_one() -> None:
    """Sections are parsed one by one; an alias to another section's anchor made the reader
    say 'found undefined alias' of an alias whose anchor is right there."""
    with pytest.raises(LiveParseError) as info:
        parse_dump(BOMB, "nid00001.yaml")
    err = str(info.value)
    assert "too many values" in err and "alias bomb" in err, err
    assert "undefined" not in err


def test_an_alias_to_another_section_is_read_and_an_undefined_one_refused() -> None:
    parse_dump("global:\n    drop_asym_route: &one 1\nbuffers:\n    tiny: *one\n", "rtr01.yaml")
    text = "global:\n    drop_asym_route: 1\nbuffers:\n    tiny: *nowhere\n"
    with pytest.raises(LiveParseError) as info:
        parse_dump(text, "rtr01.yaml")
    err = str(info.value)
    assert "undefined alias" in err


def test_an_unreadable_since_is_e_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``compare --since OLD_SITE`` was checked readable by click before lnetgen read it: an
    unreadable old inventory was E-USAGE, not the E-FILE the README's exit table gives."""
    old = tmp_path / "old.yaml"
    shutil.copy(DEMO, old)
    _unreadable(monkeypatch, old)
    r = run("compare", str(DEMO), "--since", str(old), "--strategies", "baseline")
    assert r.exit_code == 2, r.output
    assert f"{old}: error[E-FILE] $: cannot be read (permission denied)" in r.output
