"""Every emitted lnetctl file parses back to what was meant: YAML reads each interface name as
the same string (never ``True``/``None``, never a syntax error), and the nets and routes are the
plan's.  Interface names come from the schema's own pattern (hypothesis), so any name the
inventory accepts is covered."""

from __future__ import annotations

import re

import yaml
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from lnetgen import nodes
from lnetgen.api import generate
from lnetgen.emit.base import render
from lnetgen.solve import strategy_names

DEMO = str(ROOT / "sites" / "demo.yaml")

_ACCEPTED = st.one_of(
    st.from_regex(re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,9}(:[A-Za-z0-9]{1,4})?\Z")),
    # near misses of the words YAML 1.1 resolves: accepted, and must stay strings
    st.sampled_from(["onion", "no0", "y1", "Off-1", "nullx", "yes.1", "true_", "n:1x"]),
).filter(lambda name: nodes.IFACE_RE.fullmatch(name) is not None)


@given(_ACCEPTED)
def test_any_accepted_interface_reads_back_as_itself(iface: str) -> None:
    text = render(
        "lnetctl.yaml.j2",
        header="h",
        role="server",
        hosts="oss01",
        nets=[{"net": "o2ib1", "interfaces": [iface], "tunables": {}}],
        route_text="",
        routing=False,
        buffers={},
        globals={},
    )
    doc = yaml.safe_load(text)
    assert doc["net"][0]["local NI(s)"][0]["interfaces"][0] == iface


@given(st.sampled_from(["null", "on", "No", "TRUE", "ipogif0:", "eth0::1", "a" * 16, "ib0/1"]))
def test_names_yaml_would_misread_are_refused(iface: str) -> None:
    assert nodes.IFACE_RE.fullmatch(iface) is None


def test_demo_lnetctl_files_read_back_as_the_plan() -> None:
    for strategy in strategy_names():
        gen = generate(DEMO, strategy, "lnetctl")
        plan = gen.plan
        routes = plan.routes_for_server()
        by_path = {f.path: f for f in gen.files}
        for cc in plan.client_classes:
            doc = yaml.safe_load(by_path[f"lnetctl/{cc.name}.yaml"].content)
            assert [n["net type"] for n in doc["net"]] == [cc.net]
            assert doc["net"][0]["local NI(s)"][0]["interfaces"][0] == cc.interface
            got = [(r["net"], r["gateway"], r["hop"], r["priority"]) for r in doc.get("route", [])]
            assert got == [(r.net, r.gateway, r.hop, r.priority) for r in cc.routes]
        for s in plan.servers:
            doc = yaml.safe_load(by_path[f"lnetctl/{s.name}.yaml"].content)
            got = [(r["net"], r["gateway"]) for r in doc.get("route", [])]
            assert got == [(r.net, r.gateway) for r in routes.get(s.name, ())]
        for r in plan.routers:
            doc = yaml.safe_load(by_path[f"lnetctl/{r.name}.yaml"].content)
            assert [n["net type"] for n in doc["net"]] == list(r.networks)
            assert doc["routing"] == {"enable": 1}
