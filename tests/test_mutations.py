"""Random damage to a valid inventory never crashes the library.

``sites/demo.yaml`` is loaded as data and mutated at random - keys dropped, list entries
duplicated, values retyped, values swapped between fields, keys renamed, hostile strings and raw
YAML 1.1 scalars inserted, a top-level key repeated in the text - then written out and fed to
the library.  For every example:

* ``inventory.check`` returns diagnostics and never raises; every code is a known code, every
  diagnostic names the file, and the site is returned exactly when there is no error;
* ``api.generate`` either succeeds or raises ``InputError`` carrying at least one error -
  never any other exception;
* whatever it does generate passes ``tests/test_emitted_chars.py``'s ``problems()``: a value
  that slips through validation must not reach a file in a form a parser would misread.

The example count is set below (``EXAMPLES``); the whole module runs in well under a minute.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import ROOT
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_emitted_chars import NAME, problems

from lnetgen import api, inventory
from lnetgen.diagnostics import Diagnostic, InputError, errors
from lnetgen.solve import strategy_names

EXAMPLES = 300

with open(ROOT / "sites" / "demo.yaml", encoding="utf-8") as _fh:
    DEMO: dict[str, Any] = yaml.safe_load(_fh)

try:
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

#: Strings that break formats, parsers, shells or look-alike checks.
HOSTILE_STRINGS = [
    "",
    " ",
    "rtr01;reboot",
    'oss"01',
    "oss'01",
    "`id`",
    "$(id)",
    "${HOME}",
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "x\ny",
    "rtr01\n",
    "\nrtr01",
    "rtr01\r",
    "rtr01\t",
    "x\x00y",
    "rtr\x1b[2J",
    "\u043ess01",  # Cyrillic o
    "rtr\u200b01",  # zero-width space
    "rtr\u202e01",  # right-to-left override
    "\uff12\uff10\uff11@gni",  # fullwidth digits
    "x" * 300,
    "#x",
    "a: b",
    "- x",
    "*a",
    "&a",
    "!!python/object",
    "{{ lookup('pipe', 'id') }}",
    "{",
    "[",
    "%",
    "o2ib",
    "o2ib65536",
    "elan",
    "201@gni",
    "99999999999@gni",
    "1@elan",
    "0x0002c90300a00001",
    "0x0000000000000000",
    "10.10.0.1",
    "010.10.0.1",
    "nid[1-100000000]",
    "nid[1-3],nid[2-4]",
    "nid[3-1]",
    "L01",
    "L99",
    "core1",
    "core9",
    "scratch",
    "home",
    "gni",
    "ib0",
    "0-3",
    "0-99999999999",
    "4:3",
    "0:0",
    "NaN",
    "inf",
    "-1",
    "65536",
]

#: Unquoted scalars YAML 1.1 turns into something else (written into the text as they are).
RAW_SCALARS = [
    "on",
    "no",
    "yes",
    "0755",
    "010",
    "1:30",
    "2.10",
    "~",
    ".inf",
    ".nan",
    "0x10",
    "1e3",
    "2024-01-01",
    "!!binary cnRyMDE=",
    "!!str 5",
    "null",
    "'unterminated",
]

_values = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**32, 2**64, 65535, 65536, 4096, 1024]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.sampled_from([[], {}, ["x"], {"a": 1}, [1, 2, 3], [[0, 0]], {"name": "x"}]),
)

#: Destructive edits (most make the inventory invalid) and gentle ones (most keep it valid, so
#: the solver and the emitters see unusual but accepted inventories too).
OPS = ["drop", "duplicate", "retype", "swap", "hostile", "rename", "raw", "dupkey"]
GENTLE = ["sibling", "sibling", "sibling", "drop-entry", "nudge", "strategy"]
_SECTIONS = ["routers", "servers"]
_Edit = tuple[tuple[str | int, ...], Any]
_STRATEGY_EDITS: list[_Edit] = [(("strategy", "default"), name) for name in strategy_names()]
_STRATEGY_EDITS += [
    (("strategy", "groups", "oss"), "2:1"),
    (("strategy", "groups", "oss"), "1:1"),
    (("strategy", "groups", "backup"), "none"),
    (("strategy", "groups", "backup_priority"), 5),
    (("strategy", "storage_net_base"), 7),
    (("filesystems", 0, "net_base"), 300),
]


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for k in sorted(data, key=str):
            out += _paths(data[k], (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    node = doc
    for p in path[:-1]:
        node = node[p]
    return node


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    return _parent(doc, path)[path[-1]]


def _retype(value: Any) -> Any:
    """The same content in another type: 3 -> "3", "3" -> 3, [x] -> {"0": x}, ..."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else str(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return [value]
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return "null"


class Mutated:
    """A mutated inventory: its YAML text, the data it was dumped from, and the edits made."""

    def __init__(self, text: str, doc: Any, edits: str) -> None:
        self.text, self.doc, self.edits = text, doc, edits

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        return f"Mutated(edits={self.edits!r})"


@st.composite
def mutated(draw: st.DrawFn) -> Mutated:
    """1-4 random edits of the demo site."""
    doc = copy.deepcopy(DEMO)
    raws: list[str] = []
    dupkeys: list[str] = []
    done = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3, 4]))):
        paths = _paths(doc)
        if not paths:
            break
        op = draw(st.sampled_from(OPS + GENTLE))
        if op in GENTLE:
            done.append(_gentle(draw, doc, op))
            continue
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        key = path[-1]
        if op == "drop":
            del parent[key]
        elif op == "duplicate":
            if isinstance(parent, list):
                parent.append(copy.deepcopy(parent[key]))
            else:
                dupkeys.append(str(path[0]))
        elif op == "retype":
            parent[key] = _retype(parent[key])
        elif op == "swap":
            other = draw(st.sampled_from(paths))
            if other[: len(path)] == path or path[: len(other)] == other:
                continue  # one contains the other
            a, b = copy.deepcopy(parent[key]), copy.deepcopy(_get(doc, other))
            parent[key] = b
            _parent(doc, other)[other[-1]] = a
        elif op == "hostile":
            parent[key] = draw(_values)
        elif op == "rename":
            if not isinstance(parent, dict):
                continue
            new = draw(st.sampled_from([str(key).upper(), f"{key} ", f"{key}s", "nаme", "x"]))
            parent[new] = parent.pop(key)
        elif op == "raw":
            parent[key] = f"@@raw{len(raws)}@@"
            raws.append(draw(st.sampled_from(RAW_SCALARS)))
        elif op == "dupkey":
            dupkeys.append(str(path[0]))
        done.append(f"{op} {json.dumps(path, default=str)}")
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)
    for k, raw in enumerate(raws):
        text = text.replace(f"'@@raw{k}@@'", raw).replace(f"@@raw{k}@@", raw)
    for top in dupkeys:
        if isinstance(doc, dict) and top in doc:
            text += yaml.dump({top: doc[top]}, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
    return Mutated(text, doc, "; ".join(done))


def _gentle(draw: st.DrawFn, doc: Any, op: str) -> str:
    """An edit that usually keeps the inventory valid; returns its description."""
    if op == "strategy":
        path, value = draw(st.sampled_from(_STRATEGY_EDITS))
        node: Any = doc
        try:
            for p in path[:-1]:
                node = node[p]
        except (KeyError, IndexError, TypeError):
            return f"set {path} (absent)"
        if isinstance(node, dict):
            node[path[-1]] = value
        return f"set {path} = {value!r}"
    section = draw(st.sampled_from(_SECTIONS))
    entries = doc.get(section) if isinstance(doc, dict) else None
    if not isinstance(entries, list) or len(entries) < 2:
        return f"{op} {section} (too few)"
    i = draw(st.integers(min_value=0, max_value=len(entries) - 1))
    if op == "drop-entry":
        del entries[i]
        return f"drop {section}[{i}]"
    if op == "nudge":
        ints = [p for p in _paths(entries[i]) if isinstance(_get(entries[i], p), int)]
        if not ints:
            return f"nudge {section}[{i}] (no number)"
        p = draw(st.sampled_from(ints))
        delta = draw(st.sampled_from([-2, -1, 1, 2, 3]))
        _parent(entries[i], p)[p[-1]] += delta
        return f"nudge {section}[{i}]{list(p)} by {delta}"
    j = draw(st.integers(min_value=0, max_value=len(entries) - 1))
    common = sorted(set(_paths(entries[i])) & set(_paths(entries[j])), key=str)
    if i == j or not common:
        return f"sibling {section} (none)"
    p = draw(st.sampled_from(common))
    a, b = _get(entries[i], p), _get(entries[j], p)
    _parent(entries[i], p)[p[-1]] = copy.deepcopy(b)
    _parent(entries[j], p)[p[-1]] = copy.deepcopy(a)
    return f"swap {section}[{i}] and [{j}] at {list(p)}"


@pytest.fixture(scope="module")
def workdir() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="lnetgen-mutations-") as tmp:
        yield tmp


def _check_diags(diags: list[Diagnostic], path: str) -> None:
    assert all(isinstance(d, Diagnostic) for d in diags)
    unknown = [d.format() for d in diags if d.code not in inventory.CODES]
    assert not unknown, unknown
    assert all(d.file for d in diags), [d.format() for d in diags]
    assert all(d.file == path or not d.file.endswith(".yaml") for d in diags), diags


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    case=mutated(),
    strategy=st.sampled_from([None, *strategy_names()]),
    formats=st.sampled_from([None, None, "all", "lnetctl,modprobe"]),
)
def test_mutated_inventory_keeps_the_contract(
    workdir: str, case: Mutated, strategy: str | None, formats: str | None
) -> None:
    text, edits = case.text, case.edits
    path = os.path.join(workdir, "site.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)

    site, diags = inventory.check(path)  # must not raise
    _check_diags(diags, path)
    assert (site is None) == bool(errors(diags)), (edits, [d.format() for d in diags])

    try:
        gen = api.generate(path, strategy, formats)
    except InputError as exc:
        assert errors(exc.diagnostics), (edits, exc.diagnostics)
        event("refused by check" if site is None else "refused by solve or render")
        return
    event("generated")
    assert site is not None, f"generate succeeded on an inventory check rejects ({edits})"
    found = {f.path: problems(f.path, f.content) for f in gen.files}
    found = {k: v for k, v in found.items() if v}
    assert not found, (edits, dict(list(found.items())[:5]))


def test_hostile_strings_are_refused_wherever_a_name_goes(workdir: str) -> None:
    """Each hostile string as a router name: the site is refused or the string is harmless."""
    path = os.path.join(workdir, "names.yaml")
    for s in HOSTILE_STRINGS:
        doc = copy.deepcopy(DEMO)
        doc["routers"][0]["name"] = s
        with open(path, "w", encoding="utf-8") as fh:
            yaml.dump(doc, fh, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
        site, diags = inventory.check(path)
        _check_diags(diags, path)
        if site is not None:  # accepted: it must be a plain host name
            assert re.fullmatch(NAME, s), s


def test_client_net_without_interface_is_refused(workdir: str) -> None:
    """A client net needs an interface: lnetctl YAML and /etc/lnet.conf list one per net, and
    without it lnetgen would write a null interface (and an empty one for Ansible)."""
    doc = copy.deepcopy(DEMO)
    del doc["client_nets"][0]["interface"]
    path = os.path.join(workdir, "no-interface.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.dump(doc, fh, Dumper=_Dumper, sort_keys=False)
    site, diags = inventory.check(path)
    assert site is None
    assert [(d.code, d.path) for d in errors(diags)] == [
        ("E-SCHEMA-REQUIRED", "$.client_nets[0]")
    ], [d.format() for d in diags]
    assert "interface" in errors(diags)[0].message
    with pytest.raises(InputError):
        api.generate(path)
