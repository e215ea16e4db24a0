"""Node sets, LNet net names and NIDs: the one place that knows their syntax.

* Node sets go through ClusterShell, always with ``RESOLVER_NOGROUP`` (the pip package ships
  example groups, so ``@oss`` would otherwise silently resolve to ``example[4-5]``).
* Net names follow libcfs: ``<lnd><number>``, number 0..65535, ``o2ib0`` == ``o2ib``.
* Ansible's ``[01:50]`` host ranges are converted here as well.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetParseError
from ClusterShell.RangeSet import RangeSet, RangeSetParseError

from lnetgen.diagnostics import clip

#: LNDs current Lustre parses (libcfs_netstrfns[]), and whether their address is IPv4.
LNDS: dict[str, bool] = {
    "tcp": True,
    "o2ib": True,
    "gni": False,
    "gip": True,
    "ptlf": False,
    "kfi": False,
    "efa": True,
    "bxi3f": False,
}
#: LNDs whose NIDs may carry an IPv6 address (lustre-release ``lib/libcfs/nidstrings.c``: only
#: their ``libcfs_netstrfns[]`` entries have the large-address parser ``nf_str2addr_size``).
IPV6_LNDS = frozenset(("tcp", "efa"))
#: LNDs that old manuals use but current Lustre no longer parses.
REMOVED_LNDS = {"elan", "ra", "mx", "ptl", "gm", "openib", "qsw", "vib", "iib", "ciber", "tofu"}

MAX_NET_NUMBER = 65535
#: digits of a net number read at most (a 32-bit number has 10; LNet takes 16 bits)
_NET_DIGITS_MAX = 10

HOSTNAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})\Z")
#: Words YAML 1.1 resolves to a boolean or null: an interface so named would read back from
#: /etc/lnet.conf as ``True`` or ``None``, so none may be (nor such a word before an alias label).
YAML_WORDS = (
    "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
    "|on|On|ON|off|Off|OFF|null|Null|NULL"
)
#: The schema's interface pattern: Linux rules (IFNAMSIZ - 1 = 15 characters, no '/', no white
#: space, no ':') plus at most one IP-alias label (``eth0:1``, which LNet's socket LND accepted
#: historically); never a trailing or doubled ':'.
IFACE_PATTERN = (
    r"^(?=.{1,15}$)(?!(?:" + YAML_WORDS + r")(?::|$))[A-Za-z][A-Za-z0-9_.-]*(?::[A-Za-z0-9]+)?$"
)
IFACE_RE = re.compile(IFACE_PATTERN.replace("$", r"\Z"))
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")  # switches, leaves, file systems
_NET_RE = re.compile(r"^([a-z][a-z0-9]*?)([0-9]*)\Z")
GUID_RE = re.compile(r"^0x[0-9a-fA-F]{1,16}\Z")


class NodeSyntaxError(ValueError):
    """A node set, net name or NID that does not parse; ``str()`` says why."""


# ----------------------------------------------------------------------------- node sets


def nodeset(text: str | Iterable[str]) -> NodeSet:
    """Parse ClusterShell syntax (``nid[00001-18688]``) or build from names; no group lookup."""
    try:
        if isinstance(text, str):
            if "@" in text or "!" in text or "&" in text or "^" in text:
                raise NodeSyntaxError(f"{text!r}: group and set operators are not allowed")
            return NodeSet(text, resolver=RESOLVER_NOGROUP)
        ns = NodeSet(resolver=RESOLVER_NOGROUP)
        ns.updaten(list(text))
        return ns
    except (NodeSetParseError, RangeSetParseError) as exc:
        raise NodeSyntaxError(f"{exc}") from None
    except AssertionError as exc:  # ClusterShell asserts on e.g. a range of 10^9 or more
        raise NodeSyntaxError(f"{text!r}: {exc or 'invalid node set'}") from None
    except ValueError:  # ClusterShell's own unpacking fails on e.g. 'x[1-1aa---]'
        raise NodeSyntaxError(f"{text!r}: not a node set") from None


_RANGE = re.compile(r" *([0-9]+) *- *([0-9]+) *(?:/ *([0-9]+))? *")
_BRACKETS = re.compile(r"\[([^\]]*)\]")


def count(text: str) -> int:
    """How many nodes ``text`` names, computed without expanding it.

    ClusterShell materialises every number of a range, so ``n[1-900000000]`` would take minutes
    and gigabytes before its size could be checked; check ``count`` first.  Exact for node sets
    whose pieces and ranges do not overlap; otherwise an upper bound (``n[1-4],n[3-6]`` counts
    8, not 6).  A piece or range that does not parse counts as 1: ``nodeset()`` reports it.
    """
    total = 0
    depth, start = 0, 0
    pieces = []
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth <= 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    for piece in pieces:
        if not piece.strip():
            continue
        size = 1
        for group in _BRACKETS.findall(piece):
            n = 0
            for item in group.split(","):
                m = _RANGE.fullmatch(item)
                if m:
                    lo, hi, step = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
                    n += max(0, hi - lo) // max(step, 1) + 1
                else:
                    n += 1
            size *= max(n, 1)
        total += size
    return total


def expand(text: str) -> list[str]:
    """Names of a node set, in ClusterShell's (numeric-aware) order."""
    if _PLAIN.fullmatch(text):  # one name (most nearest-neighbor classes): nothing to parse
        return [text]
    return list(nodeset(text))


_PLAIN = re.compile(r"[A-Za-z0-9_.-]+")
_SIMPLE = re.compile(r"^(\D*)(\d+)$")
_WORD = re.compile(r"[A-Za-z_.-]+")


def fold(names: Iterable[str]) -> str:
    """Fold names into one node set string (``nid[00001-00004,00007]``); '' when empty.

    Names made of a non-digit prefix and one number (the common case, ``nid00042``) are grouped
    here and handed to ClusterShell one range set per prefix, which is much faster than parsing
    every name; anything else goes through ClusterShell as is.  The result is the same string
    ClusterShell would print.
    """
    names = list(names)
    if not names:
        return ""
    groups: dict[str, list[str]] = {}
    other: list[str] = []
    for name in names:
        m = _SIMPLE.match(name)
        if m:
            groups.setdefault(m.group(1), []).append(m.group(2))
        else:
            other.append(name)
    if not other and len(groups) == 1:
        ((prefix, numbers),) = groups.items()
        runs = _runs(numbers) if _WORD.fullmatch(prefix) else None
        if runs is not None:  # what ClusterShell prints for one prefix, without parsing it
            return prefix + runs if "," not in runs and "-" not in runs else f"{prefix}[{runs}]"
    ns = NodeSet(resolver=RESOLVER_NOGROUP)
    for prefix, numbers in groups.items():
        if len(numbers) == 1:
            ns.update(NodeSet(prefix + numbers[0], resolver=RESOLVER_NOGROUP))
            continue
        runs = _runs(numbers)
        if runs is None:  # mixed zero-padding: let ClusterShell sort it out
            other.extend(prefix + n for n in numbers)
            continue
        ns.update(NodeSet(f"{prefix}[{runs}]", resolver=RESOLVER_NOGROUP))
    if other:
        ns.updaten(other)
    return str(ns)


def _runs(numbers: list[str]) -> str | None:
    """``["003", "001", "002", "007"]`` -> ``"001-003,007"``; None when padding is mixed."""
    widths = {len(n) for n in numbers}
    padded = any(len(n) > 1 and n[0] == "0" for n in numbers)
    if padded and len(widths) != 1:
        return None
    width = widths.pop() if padded else 0
    values = sorted({int(n) for n in numbers})
    parts = []
    start = prev = values[0]
    for v in [*values[1:], -2]:
        if v != prev + 1:
            parts.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            start = v
        prev = v
    return ",".join(parts)


def parse_intset(text: str) -> list[int]:
    """``0-6,14`` -> ``[0, 1, ..., 6, 14]``."""
    try:
        return [int(x) for x in RangeSet(text)]
    except (RangeSetParseError, ValueError) as exc:
        raise NodeSyntaxError(f"{text!r}: {exc}") from None


_CS_BRACKET = re.compile(r"\[([^\]]*)\]")


def to_ansible(folded: str) -> list[str]:
    """ClusterShell folding -> Ansible host patterns (one ``[a:b]`` range per bracket).

    ``nid[00001-00003,00007]`` -> ``["nid[00001:00003]", "nid00007"]``.  Ansible allows only
    one contiguous range per bracket, so every comma splits into its own pattern.
    """
    out: list[str] = []
    for part in _split_top(folded):
        patterns = [""]
        pos = 0
        for m in _CS_BRACKET.finditer(part):
            lit = part[pos : m.start()]
            choices = []
            for rng in m.group(1).split(","):
                if "-" in rng:
                    a, b = rng.split("-", 1)
                    choices.append(f"[{a}:{b}]")
                else:
                    choices.append(rng)
            patterns = [p + lit + c for p in patterns for c in choices]
            pos = m.end()
        tail = part[pos:]
        out.extend(p + tail for p in patterns)
    return out


def _split_top(folded: str) -> list[str]:
    """Split ``a[1-2],b3`` at commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in folded:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return parts


def from_ansible(pattern: str) -> str:
    """Ansible ``nid[00001:00010]`` -> ClusterShell ``nid[00001-00010]`` (one range a bracket)."""
    return re.sub(r"\[([0-9a-z]+):([0-9a-z]+)\]", r"[\1-\2]", pattern)


# ----------------------------------------------------------------------------- nets and NIDs


@dataclass(frozen=True, order=True)
class Net:
    """An LNet network: LND name and number; ``str()`` is the canonical libcfs spelling."""

    lnd: str
    number: int = 0

    def __str__(self) -> str:
        return self.lnd if self.number == 0 else f"{self.lnd}{self.number}"

    @property
    def ip_based(self) -> bool:
        return LNDS[self.lnd]


def parse_net(text: str) -> Net:
    """Parse a net name like libcfs does (prefix LND + optional decimal), with range checks."""
    m = _NET_RE.match(text)
    if not m:
        raise NodeSyntaxError(f"{text!r} is not an LNet network name (expected e.g. o2ib1, gni)")
    lnd, num = m.group(1), m.group(2)
    if lnd not in LNDS:
        # libcfs matches the LND by prefix, so 'o2ibx' is not o2ib; report removed LNDs clearly
        if lnd in REMOVED_LNDS:
            raise NodeSyntaxError(
                f"{text!r}: the {lnd!r} LND was removed from Lustre and no longer parses; "
                f"use one of {', '.join(sorted(LNDS))}"
            )
        raise NodeSyntaxError(f"{text!r}: unknown LND {lnd!r} (known: {', '.join(sorted(LNDS))})")
    digits = num.lstrip("0")  # libcfs reads leading zeros; int() refuses 4,300 digits
    if len(digits) > _NET_DIGITS_MAX:
        raise NodeSyntaxError(
            f"{clip(text, 24)!r}: net number of {len(digits)} digits is outside "
            f"0-{MAX_NET_NUMBER} (it would spill into the LND type bits)"
        )
    number = int(digits or "0")
    if number > MAX_NET_NUMBER:
        raise NodeSyntaxError(
            f"{text!r}: net number {number} is outside 0-{MAX_NET_NUMBER} "
            "(it would spill into the LND type bits)"
        )
    return Net(lnd, number)


def canonical_net(text: str) -> str:
    return str(parse_net(text))


@dataclass(frozen=True, order=True)
class Nid:
    """``address@net``; address is an IPv4 string, an IPv6 one (tcp, efa: canonical, as
    ``inet_ntop`` prints it) or a decimal number."""

    net: Net
    addr: str

    def __str__(self) -> str:
        return f"{self.addr}@{self.net}"

    def sort_key(self) -> tuple[object, ...]:
        return (self.net, addr_key(self.addr))


def addr_key(addr: str) -> tuple[int, ...]:
    if ":" in addr:  # IPv6: after every IPv4 address of the net
        return (256, int(ipaddress.IPv6Address(addr)))
    if "." in addr:
        return tuple(int(x) for x in addr.split("."))
    return (int(addr),)


def parse_nid(text: str) -> Nid:
    """Parse one NID (no ranges).  Raises ``NodeSyntaxError`` naming what is wrong."""
    if "@" not in text:
        raise NodeSyntaxError(f"{text!r} is not a NID (expected address@net, e.g. 10.0.0.1@o2ib1)")
    addr, _, netstr = text.rpartition("@")
    net = parse_net(netstr)
    if net.ip_based:
        if ":" in addr:
            if net.lnd not in IPV6_LNDS:
                raise NodeSyntaxError(
                    f"{text!r}: {net.lnd} NIDs are IPv4 only (an IPv6 address needs the tcp "
                    "or efa LND)"
                )
            try:
                return Nid(net, str(ipaddress.IPv6Address(addr)))
            except ValueError:
                raise NodeSyntaxError(f"{text!r}: {addr!r} is not an IPv6 address") from None
        try:
            ip = ipaddress.IPv4Address(addr)
        except ValueError:
            raise NodeSyntaxError(f"{text!r}: {addr!r} is not an IPv4 address") from None
        return Nid(net, str(ip))
    if not re.fullmatch(r"[0-9]{1,10}", addr):
        raise NodeSyntaxError(f"{text!r}: {net.lnd} addresses are decimal numbers")
    return Nid(net, str(int(addr)))


def host_number(name: str) -> int:
    """Trailing number of a host name (``nid00042`` -> 42); raises if there is none."""
    m = re.search(r"(\d+)$", name)
    if not m:
        raise NodeSyntaxError(f"{name!r} has no trailing number to derive a NID from")
    return int(m.group(1))


def ip_add(base: str, offset: int) -> str:
    return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(base)) + offset))
