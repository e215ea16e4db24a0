"""Workloads the reviewers could not run or that ran other than asked:

* ``nodes=placed`` on a site whose OSS have different OST counts (placed as ``lnetgen place
  clients`` places one client per OST; it was refused);
* inline node sets with commas (``nodes=nid[001,005]``, ``nodes=nid001,nid005``);
* ``files_per_ost`` beyond what the clients hold (refused as ``ranks`` is; it was cut without
  a word);
* an empty value (``name=``);
* a workload file whose only key is misspelt (``rank: 2``: "did you mean ranks?").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_present_figures import tiny

from lnetgen.api import load_plan
from lnetgen.cli.analyze import analyze_cmd
from lnetgen.diagnostics import InputError
from lnetgen.place.clients import place_clients
from lnetgen.throughput import build_ranks, load_workload, parse_inline
from lnetgen.traffic import index_plan


def uneven(tmp_path: Path) -> str:
    """The tiny site with three OSTs on oss1 and two on oss2."""
    path = Path(tiny(tmp_path))
    text = (
        path.read_text().replace('osts: "0-1"', 'osts: "0-2"').replace('osts: "2-3"', 'osts: "3-4"')
    )
    path.write_text(text)
    return str(path)


def message(exc: pytest.ExceptionInfo[InputError]) -> str:
    return " ".join(d.message for d in exc.value.diagnostics)


# ----------------------------------------------------------------------------- placed


def test_placed_on_oss_with_different_ost_counts(tmp_path: Path) -> None:
    site, plan, _ = load_plan(uneven(tmp_path), None, None)
    ix = index_plan(site, plan)
    ranks = build_ranks(site, plan, ix, parse_inline("nodes=placed"))
    assert len(ranks.node) == 5 and ranks.nodes_used == 5
    # each OSS's ranks run on the clients `place clients` picks for it (one per OST)
    want = place_clients(site, plan, ["oss1", "oss2"], None, index=ix)
    server = ranks.ost_server[ranks.pair_ost]  # one pair per rank: single stripe
    for o in want.per_oss:
        mine = ranks.node[server == ix.server_id(o.server)]
        assert sorted(mine.tolist()) == sorted(o.clients), o.server


def test_placed_even_sites_unchanged(tmp_path: Path) -> None:
    """OSS with the same rank count are placed by one ``place_clients`` call, as before."""
    site, plan, _ = load_plan(tiny(tmp_path), None, None)
    ix = index_plan(site, plan)
    ranks = build_ranks(site, plan, ix, parse_inline("nodes=placed,files_per_ost=2"))
    want = place_clients(site, plan, ["oss1", "oss2"], 4, index=ix)
    server = ranks.ost_server[ranks.pair_ost]
    for o in want.per_oss:
        got = ranks.node[server == ix.server_id(o.server)]
        assert got.tolist() == list(o.clients)


def test_placed_uneven_cli(tmp_path: Path) -> None:
    res = CliRunner().invoke(analyze_cmd, [uneven(tmp_path), "--workload", "nodes=placed"])
    assert res.exit_code == 0, res.output
    assert "nodes=placed), 5 ranks on 5 nodes" in res.output


def test_placed_too_many_ranks_names_the_oss(tmp_path: Path) -> None:
    site, plan, _ = load_plan(uneven(tmp_path), None, None)
    spec = parse_inline("nodes=placed,ranks=9")
    with pytest.raises(InputError) as exc:
        build_ranks(site, plan, index_plan(site, plan), spec)
    assert "9 nodes wanted" in message(exc)


# ----------------------------------------------------------------------------- node sets


@pytest.mark.parametrize(
    ("text", "nodes", "ranks"),
    [
        ("ranks=2,nodes=nid[001,005]", "nid[001,005]", 2),
        ("ranks=2,nodes=nid001,nid005", "nid001,nid005", 2),
        ("nodes=nid001,nid005,ranks=2", "nid001,nid005", 2),
        ("nodes=nid[001-002],nid[005,007],ranks=3", "nid[001-002],nid[005,007]", 3),
        ("osts=0-1,3,nodes=nid[001,005],ranks=2", "nid[001,005]", 2),
    ],
)
def test_inline_node_sets_with_commas(text: str, nodes: str, ranks: int) -> None:
    spec = parse_inline(text)
    assert spec.nodes == nodes and spec.ranks == ranks


def test_inline_node_set_runs(tmp_path: Path) -> None:
    site, plan, _ = load_plan(tiny(tmp_path), None, None)
    ix = index_plan(site, plan)
    for text in ("ranks=2,nodes=nid[001,005]", "ranks=2,nodes=nid001,nid005"):
        ranks = build_ranks(site, plan, ix, parse_inline(text))
        assert ranks.node.tolist() == [0, 4], text


def test_inline_part_without_key_says_the_way_out() -> None:
    with pytest.raises(InputError) as exc:
        parse_inline("ranks=2,nid005")
    assert "'nid005' is not key=value" in message(exc)
    assert "file" in message(exc)


# ----------------------------------------------------------------------------- files_per_ost


def test_files_per_ost_beyond_the_clients_is_refused(tmp_path: Path) -> None:
    site, plan, _ = load_plan(tiny(tmp_path), None, None)  # 4 OSTs, 8 clients
    ix = index_plan(site, plan)
    with pytest.raises(InputError) as exc:
        build_ranks(site, plan, ix, parse_inline("files_per_ost=3"))
    text = message(exc)
    assert "files_per_ost 3" in text and "12 ranks" in text and "8 clients" in text, text
    assert len(build_ranks(site, plan, ix, parse_inline("files_per_ost=2")).node) == 8
    # the default, one per OST, is still cut to what the clients hold
    assert len(build_ranks(site, plan, ix, parse_inline("ranks_per_node=1")).node) == 4


def test_files_per_ost_refused_at_the_cli(tmp_path: Path) -> None:
    res = CliRunner().invoke(analyze_cmd, [tiny(tmp_path), "--workload", "files_per_ost=3"])
    assert res.exit_code == 2, res.output
    assert "files_per_ost 3 wants 12 ranks" in res.output


# ----------------------------------------------------------------------------- empty values


@pytest.mark.parametrize("text", ["name=", "name= ", "ranks=2,name="])
def test_empty_name_is_refused(text: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_inline(text)
    assert "name is empty" in message(exc)


def test_empty_name_in_a_file_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text('ranks: 2\nname: ""\n')
    with pytest.raises(InputError) as exc:
        load_workload(str(path))
    d = exc.value.diagnostics[0]
    assert d.line == 2 and d.path == "$.name" and "name is empty" in d.message


# ----------------------------------------------------------------------------- misspelt keys


@pytest.mark.parametrize(
    ("text", "key", "near", "line"),
    [("rank: 2\n", "rank", "ranks", 1), ("foo: 1\nnode: placed\n", "node", "nodes", 2)],
)
def test_misspelt_key_alone_gets_did_you_mean(
    tmp_path: Path, text: str, key: str, near: str, line: int
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_workload(str(path))
    d = exc.value.diagnostics[0]
    assert d.message == f"unknown key {key!r} (did you mean {near}?)"
    assert d.line == line and d.path == f"$.{key}"


def test_other_files_are_still_not_workload_files(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("secret: hunter2\n")
    with pytest.raises(InputError) as exc:
        load_workload(str(path))
    assert "not a workload file" in message(exc) and "secret" not in message(exc)
    path.write_text("a: 1\nb: 2\nrank: 3\n")  # more than two keys: any file
    with pytest.raises(InputError) as exc:
        load_workload(str(path))
    assert "not a workload file" in message(exc)


def test_inline_misspelt_key_gets_did_you_mean() -> None:
    with pytest.raises(InputError) as exc:
        parse_inline("rank=2")
    assert "unknown key 'rank' (did you mean ranks?)" in message(exc)


def test_nodes_placed_np_types(tmp_path: Path) -> None:
    site, plan, _ = load_plan(uneven(tmp_path), None, None)
    ranks = build_ranks(site, plan, index_plan(site, plan), parse_inline("nodes=placed"))
    assert ranks.node.dtype == np.int64
