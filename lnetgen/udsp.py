"""UDSP router rules (User Defined Selection Policies, Lustre 2.15+) next to route priorities.

A client's routes to a storage net may sit at two or more priorities (nearest-neighbor: its
nearest router at 0, the set's others at 1; groups: the group at 0, the backup group at 1).
With ``lustre: {udsp: true}`` each such client class also gets one router rule per such net:
``dst`` the net, ``rte`` the gateways at the best priority, so LNet puts them on the
preferred-router list of that net's peer NIs (``lnet/lnet/udsp.c``: "select the router in round
robin from the peer NI's preferred router list"; the route selection checks the UDSP-preferred
gateway before the priority).  The priorities stay: on a host whose rules are lost, the routes
alone still say the same.

Decision: the rules are a shell file of ``lnetctl udsp add --dst NET --rte RANGE`` commands
(``udsp/<class>.sh``, :func:`script`), run after ``lnetctl import`` on every LNet start, and
not a ``udsp:`` block of the lnetctl YAML.  The kernel applies a rule with ``dst`` and ``rte``
only when its action is the preferred list (``udsp.c`` ``lnet_udsp_apply_rule_on_ni``, the
"Router rule" branch: any other action is logged as "Bad action type" and the rule is kept but
never applied), and only ``lnetctl udsp add`` without ``--priority`` makes that action
(``lnetctl.c jt_add_udsp``: "pref" unless ``--priority``).  No YAML form of a working router
rule imports: the netlink import passes ``priority`` for a rule without ``action`` and refuses
``priority: 0`` (``lnetctl.c handle_udsp_sequences``), the ioctl import refuses a rule without
``action`` (``liblnetconfig.c handle_yaml_config_udsp``), and ``liblnetconfig_udsp.c
lustre_lnet_add_udsp`` picks a default action only for rules without ``rte``.

So a working router rule is one without a priority (``Rule.priority`` None): ``lnetctl udsp
show`` and ``lnetctl export`` print it with ``idx``, ``dst`` and ``rte`` and no ``action``
(``yaml_add_udsp_action`` prints only the priority action).  A rule with ``dst`` and ``rte``
(or ``dst`` and ``src``) and ``action: {priority: N}`` is dead (:attr:`Rule.dead`): what
lnetgen before this decision wrote into lnet.conf, and what a site that deployed it runs.
``diff`` plans its removal and the working rule; ``verify`` reports it and ranks by it no
gateway.

The script first deletes every rule (``lnetctl udsp del --idx -1``: all of them on 2.15 and
later, ``--all`` being 2.16's spelling of it), so running it again leaves the same list.
``dst`` is a net (``cfs_parse_nid_parts``: "only net is present"), ``rte`` one address range at
one net: ``[26001-26004]@gni``, ``10.10.1.[1-4]@o2ib`` (single-quoted in the script: a glob to
the shell); gateways that no single range covers get one rule each.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lnetgen.plan import Plan, Route

#: Where the lnet role installs a class's script, and the drop-in that runs it at LNet start.
SCRIPT_PATH = "/etc/lnet-udsp.sh"
DROP_IN_PATH = "/etc/systemd/system/lnet.service.d/lnetgen-udsp.conf"

#: Deletes every UDSP rule (``lnet_udsp_del_policy``: a negative index destroys them all).
DELETE_ALL = "lnetctl udsp del --idx -1"

_IP = re.compile(r"^(\d{1,3}\.\d{1,3}\.\d{1,3})\.(\d{1,3})@(\S+)$")
_NUM = re.compile(r"^(\d+)@(\S+)$")
_RANGE = re.compile(r"^(?:\[([0-9,\-]+)\]|(\d+))$")


@dataclass(frozen=True)
class Rule:
    """One UDSP rule; lnetgen writes router rules only: prefer the gateways ``rte`` (an address
    range) for peers on ``dst``, with the preferred-list action (``priority`` None)."""

    dst: str
    rte: str
    #: ``action: {priority: N}``; None: no priority (the preferred-list action)
    priority: int | None = None
    src: str = ""  # a rule of another kind (a local net or NID); lnetgen writes none
    #: the line a reader found the rule at (0: unknown); not part of what the rule is
    line: int = field(default=0, compare=False)

    @property
    def dead(self) -> bool:
        """A rule the kernel keeps but never applies: ``dst`` with ``rte`` (or ``src``) and a
        priority action (``udsp.c``: such rules need the preferred-list action)."""
        return bool(self.dst and (self.rte or self.src) and self.priority is not None)

    def options(self) -> str:
        """The rule as ``lnetctl udsp add`` options."""
        parts = [
            f"--{k} {v}" for k, v in (("src", self.src), ("dst", self.dst), ("rte", self.rte)) if v
        ]
        if self.priority is not None:
            parts.append(f"--priority {self.priority}")
        return " ".join(parts)

    def command(self) -> str:
        """The ``lnetctl udsp add`` command that makes the rule, quoted for a POSIX shell."""
        parts = [
            f"--{k} {shlex.quote(v)}"
            for k, v in (("src", self.src), ("dst", self.dst), ("rte", self.rte))
            if v
        ]
        if self.priority is not None:
            parts.append(f"--priority {self.priority}")
        return " ".join(["lnetctl udsp add", *parts])

    def key(self) -> tuple[str, str, str, int | None]:
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


def script(rules: Sequence[Rule], header: str, hosts: str) -> str:
    """A client class's rules as a POSIX shell file ('' without rules): delete every rule,
    then add each, after ``lnetctl import`` on every LNet start."""
    if not rules:
        return ""
    head = [
        header,
        f"UDSP router rules for {hosts}",
        f"Run after 'lnetctl import /etc/lnet.conf' on every LNet start: sh {SCRIPT_PATH}",
        "(lnetctl import cannot carry them: it gives a rule a priority action, and the kernel",
        "applies a rule with --dst and --rte only without one).  For every boot, a drop-in",
        f"{DROP_IN_PATH}:",
        "  [Service]",
        f"  ExecStartPost=/bin/sh {SCRIPT_PATH}",
        "It deletes every UDSP rule first (--idx -1: all of them), so it may run again.",
    ]
    body = ["set -e", DELETE_ALL, *(r.command() for r in rules)]
    return "".join(f"# {h}\n" for h in head) + "".join(f"{b}\n" for b in body)


class ScriptError(ValueError):
    """A line of a rules script lnetgen does not read: ``line`` (1-based) and why."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


_ADD_OPTIONS = {"--src": "src", "--dst": "dst", "--rte": "rte", "--priority": "priority"}


def parse_script(text: str) -> tuple[Rule, ...]:
    """The rules a script of :func:`script` adds, in order (each with its line).  Comments,
    blank lines, ``set -e`` and ``lnetctl udsp del --idx -1`` are skipped; any other line raises
    ``ScriptError``."""
    rules: list[Rule] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line == "set -e":
            continue
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise ScriptError(n, f"cannot be read as a shell command: {exc}") from None
        if words == DELETE_ALL.split():
            rules.clear()
            continue
        if words[:3] != ["lnetctl", "udsp", "add"] or len(words) % 2 == 0:
            raise ScriptError(n, "expected 'lnetctl udsp add --dst NET --rte RANGE'")
        opts: dict[str, str] = {}
        for opt, value in zip(words[3::2], words[4::2], strict=True):
            name = _ADD_OPTIONS.get(opt)
            if name is None or name in opts:
                raise ScriptError(n, f"unexpected option {opt[:40]!r} of 'lnetctl udsp add'")
            opts[name] = value
        prio = opts.get("priority")
        if prio is not None and not prio.isdigit():
            raise ScriptError(n, f"--priority {prio[:40]!r} is not a number")
        rules.append(
            Rule(
                opts.get("dst", ""),
                opts.get("rte", ""),
                None if prio is None else int(prio),
                opts.get("src", ""),
                n,
            )
        )
    return tuple(rules)


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


def working(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """The router rules of ``rules`` LNet applies: ``dst`` and ``rte``, no priority action."""
    return tuple(r for r in rules if r.dst and r.rte and not r.src and r.priority is None)


def preferred(rules: Sequence[Rule], net: str, gateway: str) -> bool:
    """Whether a working router rule for ``net`` prefers ``gateway``."""
    return any(r.dst == net and matches(r.rte, gateway) for r in working(rules))


__all__ = [
    "DELETE_ALL",
    "DROP_IN_PATH",
    "SCRIPT_PATH",
    "Rule",
    "ScriptError",
    "class_rules",
    "matches",
    "parse_script",
    "preferred",
    "router_rules",
    "rte_ranges",
    "script",
    "working",
]
