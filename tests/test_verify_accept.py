"""``verify`` holds each host's tunables to what the kernel runs (``V-TUNABLE``), and a route to
a net the host is on is an error (``V-ROUTE-LOCAL``): a reviewer hand-damaged a generated tree
in ways ``lnetctl import`` or the kernel refuse or silently change, and ``verify`` proved each
damaged tree (exit 0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lnetgen.verify import verify
from lnetgen.verify.accept import _problems

GLOBAL = "global:\n    drop_asym_route: 1\n"


def _found(t: Path, code: str) -> list[tuple[str, int, str, str]]:
    res = verify(str(t))
    return [(Path(d.file).name, d.line, d.path, d.message) for d in res.findings if d.code == code]


def _append_global(path: Path, lines: str) -> None:
    text = path.read_text()
    assert GLOBAL in text, path
    path.write_text(text.replace(GLOBAL, GLOBAL + lines))


def test_the_generated_tree_has_no_such_finding(tree: Path) -> None:
    assert verify(str(tree)).exit_code == 0


def test_retry_count_not_below_the_timeout_is_refused(tree: Path) -> None:
    conf = tree / "lnetctl/oss01.yaml"
    _append_global(conf, "    transaction_timeout: 2\n    retry_count: 2\n")
    (got,) = _found(tree, "V-TUNABLE")
    assert got[:3] == (
        "oss01.yaml",
        conf.read_text().split("\n").index("    transaction_timeout: 2") + 1,
        "$.global.transaction_timeout",
    )
    assert "retry_count 2 is not below transaction_timeout 2" in got[3]
    assert verify(str(tree)).exit_code == 1


def test_retries_with_health_off_are_refused(tree: Path) -> None:
    _append_global(tree / "lnetctl/oss02.yaml", "    health_sensitivity: 0\n    retry_count: 3\n")
    (got,) = _found(tree, "V-TUNABLE")
    assert got[2] == "$.global.retry_count" and "health_sensitivity 0" in got[3]


def test_o2ib_peer_credits_outside_the_clamp(tree: Path) -> None:
    conf = tree / "lnetctl/oss03.yaml"
    text = conf.read_text().replace(
        "              0: ib0\n",
        "              0: ib0\n          tunables:\n              peer_credits: 300\n",
        1,
    )
    conf.write_text(text)
    got = sorted(_found(tree, "V-TUNABLE"))
    assert [g[:1] + g[2:3] for g in got] == [
        ("oss03.yaml", "$.net.o2ib.peer_credits"),
    ], got
    assert "outside 8-255" in got[0][3]


def test_a_route_to_a_local_net_is_an_error(tree: Path) -> None:
    conf = tree / "lnetctl/oss01.yaml"
    text = conf.read_text().replace(
        "route:\n",
        "route:\n    - net: o2ib100\n      gateway: 10.10.0.1@o2ib100\n      hop: 1\n"
        "      priority: 0\n",
        1,
    )
    conf.write_text(text)
    res = verify(str(tree))
    local = [d for d in res.findings if d.code == "V-ROUTE-LOCAL"]
    assert local and all(d.severity == "error" for d in local)
    assert res.exit_code == 1


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"drop_asym_route": 5}, "drop_asym_route 5 is outside 0-1"),
        ({"o2ib.peer_credits": 16, "o2ib.credits": 8}, "peer_credits 16 is above credits 8"),
        ({"kfi.credits": 70000}, "above 65,535"),
        ({"retry_count": 200}, "not below transaction_timeout 150"),
    ],
)
def test_each_kernel_rule(values: dict[str, int], said: str) -> None:
    assert any(said in m for _n, m in _problems(values)), _problems(values)


def test_values_the_kernel_takes_pass() -> None:
    ok = {
        "transaction_timeout": 50,
        "retry_count": 2,
        "health_sensitivity": 100,
        "kfi.peer_credits": 512,
        "kfi.credits": 4096,
        "o2ib.peer_credits": 32,
        "o2ib.credits": 512,
        "drop_asym_route": 1,
    }
    assert _problems(ok) == []
    assert _problems({"health_sensitivity": 0, "retry_count": 0}) == []
