"""``networks=``: parsing like ``lnet_parse_networks`` (CPT suffixes checked and dropped) and
formatting (interfaces grouped per net, nets in first-seen order)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from lnetgen.nodes import IFACE_RE, NodeSyntaxError, parse_net
from lnetgen.routestr.kernel import NETWORKS_MAX, SPACE, NetworksSyntaxError

_NET_DELIMS = ":()[]"  # DELIMITERS in lnet_parse_networks
_CPT_ITEM = re.compile(r"([0-9]+)(?:-([0-9]+)(?:/([0-9]+))?)?")


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i] in SPACE:
        i += 1
    return i


def _span_until(s: str, i: int, stop: str) -> int:
    while i < len(s) and s[i] not in stop:
        i += 1
    return i


def _name(s: str, i: int, stop: str) -> tuple[int, str, int]:
    """The name starting at ``i`` and ending before ``stop``: (its start, it, the index after
    it and the spaces that follow)."""
    end = _span_until(s, i, stop)
    return i, s[i:end], _skip_space(s, end)


def _check_cpt(expr: str, offset: int) -> None:
    """A ``cfs_expr_list`` in brackets: ``[0,2-3,4-8/2]`` (bounds are per node, not checked)."""
    body = expr[1:-1]
    for part in body.split(","):
        m = _CPT_ITEM.fullmatch(part.strip(SPACE))
        if m is None:
            raise NetworksSyntaxError(f"bad CPT expression {expr!r}", offset)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        stride = int(m.group(3)) if m.group(3) is not None else 1
        if hi < lo or stride == 0:
            raise NetworksSyntaxError(f"bad CPT range {part!r} in {expr!r}", offset)


def _cpt_at(s: str, i: int) -> int:
    """At a ``[``: check the CPT expression, return the index after ``]`` and spaces."""
    close = s.find("]", i)
    if close < 0:
        raise NetworksSyntaxError(f"'[' without a closing ']' in {s[i:]!r}", i)
    _check_cpt(s[i : close + 1], i)
    return _skip_space(s, close + 1)


def parse_networks(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Parse ``networks=`` like ``lnet_parse_networks``: ``[(net, (iface, ...)), ...]``.

    ``o2ib1(ib0[0,1],ib1),gni(ipogif0)`` -> ``[('o2ib1', ('ib0', 'ib1')), ('gni', ('ipogif0',))]``.
    Nets are canonical (``o2ib0`` -> ``o2ib``) in first-seen order; a net listed twice is
    merged as the kernel does; CPT suffixes are checked and dropped; ``lo`` is skipped.
    Stricter than the kernel where it silently ignores text (``o2ib1 junk``) or takes odd
    interface names.  Raises ``NetworksSyntaxError``.
    """
    if len(text) > NETWORKS_MAX:
        raise NetworksSyntaxError(f"networks string longer than {NETWORKS_MAX} bytes", 0)
    nets: dict[str, list[str]] = {}
    i, n = 0, len(text)
    while True:
        i = _skip_space(text, i)
        if i >= n:
            break
        name_at, name, i = _name(text, i, SPACE + ":()[],")
        ifaces: list[tuple[int, str]] = []
        if i < n and text[i] == "(":
            close = text.find(")", i)
            if close < 0:
                raise NetworksSyntaxError(f"'(' without a closing ')' after {name!r}", i)
            ifaces = _parse_ifaces(text, i + 1, close)
            i = _skip_space(text, close + 1)
        if i < n and text[i] == "[":
            i = _cpt_at(text, i)
        if i < n and text[i] in _NET_DELIMS:
            raise NetworksSyntaxError(f"unexpected {text[i]!r} after {name!r}", i)
        if i < n and text[i] != ",":
            junk = text[i : _span_until(text, i, ",")]
            raise NetworksSyntaxError(
                f"unexpected text {junk!r} after {name!r} (the kernel would silently ignore it)",
                i,
            )
        if not name:
            raise NetworksSyntaxError("missing network name", name_at)
        if name == "lo":
            i += 1
            continue  # "Loopback is implicit, and there can be only one"
        try:
            net = str(parse_net(name))
        except NodeSyntaxError as exc:
            raise NetworksSyntaxError(str(exc), name_at) from None
        have = nets.setdefault(net, [])
        for off, iface in ifaces:
            if iface in have:
                raise NetworksSyntaxError(f"interface {iface!r} listed twice for {net}", off)
            have.append(iface)
        i += 1
    return [(net, tuple(ifaces)) for net, ifaces in nets.items()]


def _parse_ifaces(text: str, start: int, close: int) -> list[tuple[int, str]]:
    """Interfaces between ``(`` and ``)``: ``ib0[0,1], ib1``."""
    out: list[tuple[int, str]] = []
    inner = text[:close]  # scanning stops at ')'
    i = start
    while True:
        i = _skip_space(inner, i)
        name_at, name, i = _name(inner, i, SPACE + "[],")
        if i < close and inner[i] == "[":
            i = _cpt_at(inner, i)
        if not name:
            raise NetworksSyntaxError("missing interface name", name_at)
        if not IFACE_RE.fullmatch(name):
            raise NetworksSyntaxError(f"{name!r} is not an interface name", name_at)
        out.append((name_at, name))
        if i >= close:
            return out
        if inner[i] != ",":
            raise NetworksSyntaxError(f"unexpected {inner[i]!r} in interface list", i)
        i = _skip_space(inner, i + 1)
        if i >= close:
            raise NetworksSyntaxError("interface list ends with ','", i)


def format_networks(nets: Iterable[tuple[str, str]]) -> str:
    """``[('o2ib1', 'ib0'), ('gni', 'ipogif0')]`` -> ``o2ib1(ib0),gni(ipogif0)``.

    Pairs are (net, interface); an empty interface means "no interface list".  Interfaces of a
    net are grouped (``o2ib1(ib0,ib1)``); nets keep first-seen order, because the first net
    gives the node its primary NID.  Raises ``ValueError`` for a bad net or interface name.
    """
    grouped: dict[str, list[str]] = {}
    for net_text, iface in nets:
        if net_text == "lo":
            raise ValueError("'lo' is implicit and must not be listed in networks=")
        net = str(parse_net(net_text))
        have = grouped.setdefault(net, [])
        if iface:
            if not IFACE_RE.fullmatch(iface):
                raise ValueError(f"{iface!r} is not an interface name")
            if iface not in have:
                have.append(iface)
    return ",".join(f"{net}({','.join(ifs)})" if ifs else net for net, ifs in grouped.items())
