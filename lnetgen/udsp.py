"""UDSP router rules (User Defined Selection Policies, Lustre 2.15+) next to route priorities.

A client's routes to a storage net may sit at two or more priorities (nearest-neighbor: its
nearest router at 0, the set's others at 1; groups: the group at 0, the backup group at 1).
With ``lustre: {udsp: true}`` the client's ``/etc/lnet.conf`` also carries one router rule per
such net: ``dst`` the net, ``rte`` the gateways at the best priority, so LNet puts them on the
preferred-router list of that net's peer NIs (``lnet/lnet/udsp.c``: "select the router in round
robin from the peer NI's preferred router list"; the route selection checks the UDSP-preferred
gateway before the priority).  The priorities stay: on a host whose rules are lost, the routes
alone still say the same.

The layout is what ``lnetctl export`` prints (``liblnetconfig_udsp.c``: ``idx``, ``dst``,
``rte``, ``action: {priority}``, the ``udsp:`` block last), and what ``lnetctl import`` takes:

* every rule needs ``idx`` before its ``action`` (the netlink import adds a rule when a mapping
  ends with ``idx`` set: ``lnetctl.c handle_udsp_sequences``), so ``idx`` comes first;
* the import reads ``priority: 0`` as no action and refuses it ("bad action type specified"),
  so the rules carry ``priority: 1`` -- for a router rule the value only tags the rule, the
  preference is the list;
* ``dst`` is a net (``cfs_parse_nid_parts``: "only net is present"), ``rte`` one address range
  at one net: ``[26001-26004]@gni`` (double-quoted: a plain ``[`` would start a YAML flow
  sequence), ``10.10.1.[1-4]@o2ib``; gateways that no single range covers get one rule each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lnetgen.plan import Plan, Route

#: The priority every rule carries (see the module docstring: the import refuses 0).
RULE_PRIORITY = 1

_IP = re.compile(r"^(\d{1,3}\.\d{1,3}\.\d{1,3})\.(\d{1,3})@(\S+)$")
_NUM = re.compile(r"^(\d+)@(\S+)$")
_RANGE = re.compile(r"^(?:\[([0-9,\-]+)\]|(\d+))$")


@dataclass(frozen=True)
class Rule:
    """One router rule: prefer the gateways ``rte`` (an address range) for peers on ``dst``."""

    dst: str
    rte: str
    priority: int = RULE_PRIORITY
    src: str = ""  # a rule of another kind (a local net or NID); lnetgen writes none

    def options(self) -> str:
        """The rule as ``lnetctl udsp add`` options."""
        parts = [
            f"--{k} {v}" for k, v in (("src", self.src), ("dst", self.dst), ("rte", self.rte)) if v
        ]
        return " ".join([*parts, f"--priority {self.priority}"])

    def key(self) -> tuple[str, str, str, int]:
        """What makes two rules the same, whatever their position (``idx``)."""
        return (self.src, self.dst, self.rte, self.priority)


def _ranges(numbers: list[int]) -> str:
    """``1,3-5`` for the sorted [1, 3, 4, 5]."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def rte_ranges(gateways: Iterable[str]) -> list[str]:
    """The fewest ``rte`` address ranges covering exactly ``gateways``: numeric NIDs of one
    net in one ``[a-b,c]@net``, IPv4 NIDs sharing three octets in one ``a.b.c.[d-e]@net``,
    anything else one per gateway."""
    numeric: dict[str, list[int]] = {}
    ipv4: dict[tuple[str, str], list[int]] = {}
    alone: list[str] = []
    for g in sorted(set(gateways)):
        m = _NUM.match(g)
        if m:
            numeric.setdefault(m.group(2), []).append(int(m.group(1)))
            continue
        m = _IP.match(g)
        if m:
            ipv4.setdefault((m.group(1), m.group(3)), []).append(int(m.group(2)))
            continue
        alone.append(g)
    out: list[str] = []
    for net, nums in sorted(numeric.items()):
        nums.sort()
        out.append(f"{nums[0]}@{net}" if len(nums) == 1 else f"[{_ranges(nums)}]@{net}")
    for (prefix, net), last in sorted(ipv4.items()):
        last.sort()
        body = str(last[0]) if len(last) == 1 else f"[{_ranges(last)}]"
        out.append(f"{prefix}.{body}@{net}")
    return out + alone


def router_rules(routes: Sequence[Route]) -> list[Rule]:
    """One rule per storage net whose routes sit at more than one priority (per address range
    of its best gateways), nets in the order their routes come."""
    by_net: dict[str, list[Route]] = {}
    for r in routes:
        by_net.setdefault(r.net, []).append(r)
    rules: list[Rule] = []
    for net, rs in by_net.items():
        prios = {r.priority for r in rs}
        if len(prios) < 2:
            continue
        best = min(prios)
        for rte in rte_ranges(r.gateway for r in rs if r.priority == best):
            rules.append(Rule(net, rte))
    return rules


def class_rules(plan: Plan, on: bool) -> list[list[Rule]]:
    """Each client class's rules (``client_classes`` order; none when ``on`` is False), made
    once per route set (``Plan.route_sets``) and shared: what the lnetctl files and the Ansible
    role write alike."""
    sets, class_sets = plan.route_sets
    per_set = [router_rules(rs.routes) if on else [] for rs in sets]
    return [[r for i in idx for r in per_set[i]] for idx in class_sets]


def yaml_block(rules: Sequence[Rule]) -> str:
    """The ``udsp:`` block as ``lnetctl export`` prints it ('' without rules)."""
    if not rules:
        return ""
    return "udsp:\n" + "".join(
        f"    - idx: {i}\n      dst: {r.dst}\n      rte: {_scalar(r.rte)}\n"
        f"      action:\n          priority: {r.priority}\n"
        for i, r in enumerate(rules)
    )


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: a range starting with ``[`` would read as a flow sequence,
    so it is double-quoted (libyaml hands lnetctl the same string either way)."""
    return f'"{text}"' if text.startswith("[") else text


def matches(rte: str, nid: str) -> bool:
    """Whether ``nid`` falls in the address range ``rte`` (the forms :func:`rte_ranges`
    writes, and a plain NID)."""
    if rte == nid:
        return True
    addr, _, net = rte.rpartition("@")
    naddr, _, nnet = nid.rpartition("@")
    if net != nnet:
        return False
    head, dot, last = addr.rpartition(".")
    nhead, ndot, nlast = naddr.rpartition(".")
    if head != nhead or dot != ndot:
        return False
    m = _RANGE.match(last)
    if m is None or not nlast.isdigit():
        return False
    n = int(nlast)
    if m.group(2) is not None:
        return n == int(m.group(2))
    for part in m.group(1).split(","):
        lo, _, hi = part.partition("-")
        if lo and (int(lo) <= n <= int(hi or lo)):
            return True
    return False


def preferred(rules: Sequence[Rule], net: str, gateway: str) -> bool:
    """Whether a rule for ``net`` prefers ``gateway``."""
    return any(r.dst == net and matches(r.rte, gateway) for r in rules)


__all__ = [
    "RULE_PRIORITY",
    "Rule",
    "class_rules",
    "matches",
    "preferred",
    "router_rules",
    "rte_ranges",
    "yaml_block",
]
