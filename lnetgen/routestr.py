"""The ``routes=`` and ``networks=`` module-parameter strings of the ``lnet`` kernel module.

This module owns both directions: parsing a string exactly as the kernel does
(``lnet/lnet/config.c``: ``lnet_str2tbs_sep``, ``lnet_str2tbs_expand``, ``lnet_parse_route``,
``lnet_parse_networks``) and producing the shortest reasonable string the kernel accepts.

Kernel behaviour reproduced here, and why it matters:

* Bracket expansion is *textual*: the first ``[...]`` of a token is replaced by each item, and the
  results are scanned again.  Items are ``a-b``, ``a-b/s`` or literal strings, so ``[tcp,o2ib]``,
  ``o2ib[1-4]`` and ``10.0.[1-2].[3-4]@o2ib`` all work.  ``[1-10/2]`` is rejected because the
  stride must divide ``hi - lo``; a stride of 0 would divide by zero in the kernel.
* ``:PRIORITY`` is split off *after* expansion, but the kernel keeps one priority variable per
  statement: every route of a statement gets the priority of the **last** gateway parsed.  So
  ``gni 1 10.0.0.1@o2ib:1 10.0.0.2@o2ib`` installs both routes with priority 0.
  ``parse_routes`` reports what the kernel installs; ``strict=True`` makes it an error.
* The kernel parses all route text in buffers drawn from a 64 KiB budget
  (``LNET_MAX_TEXTBUF_NOB``), each costing a 20-byte header plus the text and its NUL; a
  statement that expands to too many gateways fails the whole parameter (and LNet start-up).
  The parser simulates that accounting; ``format_routes`` splits statements to stay inside it.
* Linux caps a string module parameter at 1024 bytes (``param_set_charp``): see ``param_fits``.

Net names and NIDs are checked by ``lnetgen.nodes``; the kernel spellings it does not take
(leading zeros in IPv4 octets, hexadecimal numeric addresses) are normalised here first.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from lnetgen.nodes import IFACE_RE, Net, Nid, NodeSyntaxError, parse_net, parse_nid

#: Linux refuses a string module parameter longer than this (``kernel/params.c``).
MODULE_PARAM_MAX = 1024
#: ``LNET_MAX_TEXTBUF_NOB``: all route text buffers alive at once.
TEXTBUF_BUDGET = 64 << 10
#: ``LNET_SINGLE_TEXTBUF_NOB``: one text buffer (statement, token or expansion).
TEXTBUF_SINGLE_MAX = 4 << 10
#: ``offsetof(struct lnet_text_buf, ltb_text)`` on 64-bit kernels (list_head + int).
TEXTBUF_HEADER = 20
#: ``networks=`` longer than this is refused ("Can't parse networks: string too long").
NETWORKS_MAX = 4 << 10

_INT_MAX = 2**31 - 1  # kernel sscanf("%d") silently wraps beyond this
_U32_MAX = 2**32 - 1  # kernel sscanf("%u") silently wraps beyond this
_SPACE = " \t\n\v\f\r"  # C isspace() in the "C" locale
_SEPARATORS = ";\n\r"  # lnet_issep()
_NET_DELIMS = ":()[]"  # DELIMITERS in lnet_parse_networks
_DIGITS = re.compile(r"[0-9]+")
_RANGE_ITEM = re.compile(r"(-?[0-9]+)-(-?[0-9]+)(?:/(-?[0-9]+))?")
_IPV4_LOOSE = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)")
_RANGE_HEAD = re.compile(r"-?[0-9]+--?[0-9]+")
_LOOPBACK = re.compile(r"lo[0-9]*")
_HEX = re.compile(r"0[xX]([0-9a-fA-F]+)")
_CPT_ITEM = re.compile(r"([0-9]+)(?:-([0-9]+)(?:/([0-9]+))?)?")


class RouteSyntaxError(ValueError):
    """A ``routes=`` string the kernel would refuse; ``offset`` locates the faulty fragment."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message, offset)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})"

    def caret(self, text: str) -> str:
        """Two lines: ``text`` with tabs/newlines shown as spaces, and a ``^`` under the fault."""
        shown = "".join(" " if ch in _SPACE else ch for ch in text)
        return f"{shown}\n{' ' * self.offset}^"


class RouteBudgetError(RouteSyntaxError):
    """The kernel would run out of route text buffers (``Too many text buffers``)."""


class NetworksSyntaxError(RouteSyntaxError):
    """A ``networks=`` string the kernel would refuse (or silently misread)."""


@dataclass(frozen=True, order=True)
class KRoute:
    """One route as the kernel installs it: ``net`` via single ``gateway`` NID (canonical)."""

    net: str
    gateway: str
    hop: int = -1  # -1: omitted (LNET_UNDEFINED_HOPS)
    priority: int = 0  # 0 is the most preferred

    @classmethod
    def make(cls, net: str, gateway: str, hop: int = -1, priority: int = 0) -> KRoute:
        """Canonicalise and check a route; raises ``ValueError`` naming the problem."""
        target = _route_net(net)
        gw = _check_gateway(_kernel_nid(gateway), target)
        _check_hop_priority(hop, priority)
        return cls(str(target), str(gw), hop, priority)


# ----------------------------------------------------------------------------- bracket expansion


@dataclass
class _Text:
    """Text plus, for every character, its offset in the original parameter string."""

    text: str
    origin: list[int]

    def at(self, index: int) -> int:
        if not self.origin:
            return 0
        if index >= len(self.origin):  # just past the end: one after the last character
            return self.origin[-1] + index - len(self.origin) + 1
        return self.origin[max(index, 0)]


def _expand_once(src: _Text) -> list[_Text] | None:
    """One pass of ``lnet_str2tbs_expand``: ``None`` when there is no ``[``."""
    s = src.text
    lb = s.find("[")
    if lb < 0:
        return None
    rb = s.find("]", lb)
    if rb < 0:
        raise RouteSyntaxError(f"'[' without a closing ']' in {s!r}", src.at(lb))
    head, head_o = s[:lb], src.origin[:lb]
    tail, tail_o = s[rb + 1 :], src.origin[rb + 1 :]
    out: list[_Text] = []
    pos = lb + 1
    while True:
        end = pos
        while end < rb and s[end] != ",":
            end += 1
        item = s[pos:end]
        if not item:
            raise RouteSyntaxError(f"empty item in bracket list {s[lb : rb + 1]!r}", src.at(pos))
        values = _range_values(item, src.at(pos))
        if values is None:  # a literal string, substituted as written
            out.append(_Text(head + item + tail, head_o + src.origin[pos:end] + tail_o))
        else:
            for v in values:
                num = str(v)
                out.append(_Text(head + num + tail, head_o + [src.at(pos)] * len(num) + tail_o))
        if end >= rb:
            return out
        pos = end + 1


def _range_values(item: str, offset: int) -> range | None:
    """``a-b`` / ``a-b/s`` as the kernel's ``sscanf("%d-%d/%d%n")`` sees them, or ``None``.

    ``None`` means the kernel takes the item as a literal string (it does not start with
    ``%d-%d``).  Raises for what the kernel rejects: trailing junk after a range, negative
    numbers, ``hi < lo``, a stride that does not divide ``hi - lo``; also for stride 0 (a
    division by zero in the kernel) and numbers the kernel's ``%d`` would wrap.
    """
    m = _RANGE_HEAD.match(item)
    if m is None:
        return None
    full = _RANGE_ITEM.fullmatch(item)
    if full is None:
        raise RouteSyntaxError(f"junk after the range in bracket item {item!r}", offset)
    lo, hi = int(full.group(1)), int(full.group(2))
    stride = int(full.group(3)) if full.group(3) is not None else 1
    if max(abs(lo), abs(hi), abs(stride)) > _INT_MAX:
        raise RouteSyntaxError(
            f"number in range {item!r} exceeds {_INT_MAX} (the kernel's %d would wrap it)", offset
        )
    if lo < 0 or hi < 0 or stride < 0:
        raise RouteSyntaxError(f"negative number in range {item!r}", offset)
    if hi < lo:
        raise RouteSyntaxError(f"range {item!r} ends below its start", offset)
    if stride == 0:
        raise RouteSyntaxError(
            f"stride 0 in range {item!r} (the kernel would divide by zero)", offset
        )
    if (hi - lo) % stride != 0:
        raise RouteSyntaxError(
            f"range {item!r}: stride {stride} does not divide {hi}-{lo}={hi - lo} "
            "(the kernel rejects it)",
            offset,
        )
    return range(lo, hi + 1, stride)


def expand_brackets(token: str, limit: int = 100_000) -> list[str]:
    """Expand one token like ``lnet_str2tbs_expand`` does, in the kernel's order.

    ``10.0.[1-2].[3-4]@o2ib`` -> ``['10.0.1.3@o2ib', '10.0.1.4@o2ib', '10.0.2.3@o2ib', ...]``.
    Raises ``RouteSyntaxError`` (offset within ``token``) or ``ValueError`` past ``limit``
    results.
    """
    out: list[str] = []
    for t in _expand_iter(_Text(token, list(range(len(token)))), None):
        out.append(t.text)
        if len(out) > limit:
            raise ValueError(f"{token!r} expands to more than {limit} strings")
    return out


class _Budget:
    """``lnet_tbnob`` bookkeeping: every text buffer costs header + text + NUL."""

    def __init__(self) -> None:
        self.live = 0

    @staticmethod
    def cost(text: str) -> int:
        return TEXTBUF_HEADER + len(text) + 1

    def alloc(self, text: str, offset: int) -> None:
        nob = self.cost(text)
        if nob > TEXTBUF_SINGLE_MAX:
            raise RouteBudgetError(
                f"text of {len(text)} bytes exceeds the kernel's single buffer "
                f"({TEXTBUF_SINGLE_MAX} bytes with header): {text[:40]!r}...",
                offset,
            )
        if self.live + nob > TEXTBUF_BUDGET:
            raise RouteBudgetError(
                f"the kernel would run out of route text buffers ({TEXTBUF_BUDGET} bytes, "
                "'Too many text buffers'): this statement expands to too many nets or "
                "gateways; split it into several statements",
                offset,
            )
        self.live += nob

    def free(self, text: str) -> None:
        self.live -= self.cost(text)


def _expand_iter(token: _Text, budget: _Budget | None) -> Iterator[_Text]:
    """Fully expanded strings of ``token`` in kernel (depth-first) order, budget-checked.

    The token's own buffer is assumed allocated by the caller; expanded finals stay allocated.
    """
    stack = [token]
    while stack:
        cur = stack.pop()
        derived = _expand_once(cur)
        if derived is None:
            yield cur
            continue
        if budget is not None:
            for d in derived:
                budget.alloc(d.text, token.at(0))
            budget.free(cur.text)
        stack.extend(reversed(derived))


# ----------------------------------------------------------------------------- nets and NIDs


@functools.lru_cache(maxsize=1 << 10)
@functools.lru_cache(maxsize=1 << 16)
def _route_net(text: str) -> Net:
    if not text.isascii():
        raise ValueError(f"{text!r} is not an LNet network name")
    if _LOOPBACK.fullmatch(text):
        raise ValueError(f"{text!r}: the loopback net cannot be a route target")
    return parse_net(text)


@functools.lru_cache(maxsize=1 << 16)
def _kernel_nid(text: str) -> Nid:
    """A single NID as ``libcfs_strnid`` reads it (no ``@`` means ``@tcp``)."""
    if not text.isascii():
        raise ValueError(f"{text!r} is not a NID")
    addr, at, netstr = text.partition("@")
    if not at:
        netstr = "tcp"
    if _LOOPBACK.fullmatch(netstr):
        raise ValueError(f"{text!r} is on the loopback net")
    net = parse_net(netstr)
    if net.ip_based:
        m = _IPV4_LOOSE.fullmatch(addr)
        if m and all(int(g) <= 255 for g in m.groups()):
            addr = ".".join(str(int(g)) for g in m.groups())  # the kernel allows leading zeros
    else:
        h = _HEX.fullmatch(addr)
        if h:
            addr = str(int(h.group(1), 16))
        elif _DIGITS.fullmatch(addr):
            addr = str(int(addr))
        if _DIGITS.fullmatch(addr) and int(addr) > _U32_MAX:
            raise ValueError(f"{text!r}: address exceeds {_U32_MAX}")
    return parse_nid(f"{addr}@{net}")


def _check_gateway(nid: Nid, target: Net) -> Nid:
    if nid.net == target:
        raise ValueError(f"gateway {nid} is on the target net {target} itself")
    return nid


def _check_hop_priority(hop: int, priority: int) -> None:
    if hop != -1 and not 1 <= hop <= 255:
        raise ValueError(f"hop count {hop} is outside 1-255 (or -1 for 'not given')")
    if not 0 <= priority <= _U32_MAX:
        raise ValueError(f"priority {priority} is outside 0-{_U32_MAX}")


# ----------------------------------------------------------------------------- routes= parser


def _statements(text: str) -> list[tuple[int, str]]:
    """``lnet_str2tbs_sep``: (offset, statement) pairs, comments removed."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        j = i
        while j < n and text[j] not in _SEPARATORS and text[j] != "#":
            j += 1
        if j > i:
            out.append((i, text[i:j]))
        if j < n and text[j] == "#":
            while j < n and text[j] not in _SEPARATORS:
                j += 1
        if j >= n:
            return out
        i = j + 1


def _tokens(stmt: str, base: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    i, n = 0, len(stmt)
    while i < n:
        if stmt[i] in _SPACE:
            i += 1
            continue
        j = i
        while j < n and stmt[j] not in _SPACE:
            j += 1
        out.append((base + i, stmt[i:j]))
        i = j
    return out


def _parse_hops(token: str) -> int | None:
    """``lnet_parse_hops``: whole-token unsigned 1..255, else ``None`` (token is a gateway)."""
    if not _DIGITS.fullmatch(token):
        return None
    value = int(token)
    if value > _U32_MAX:
        return None
    return value if 0 < value < 256 else None


@dataclass
class _Gw:
    nid: Nid
    priority: int
    offset: int


def _parse_statement(
    stmt: str, base: int, budget: _Budget, strict: bool
) -> list[tuple[KRoute, int]]:
    toks = _tokens(stmt, base)
    nets: list[Net] = []
    gws: list[_Gw] = []
    hops = -1
    for index, (off, tok) in enumerate(toks):
        if index == 1:
            h = _parse_hops(tok)
            if h is not None:
                hops = h
                continue
            if _DIGITS.fullmatch(tok):
                raise RouteSyntaxError(
                    f"{tok!r} in place of the hop count is not 1-255, and not a gateway NID", off
                )
        budget.alloc(tok, off)
        for t in _expand_iter(_Text(tok, list(range(off, off + len(tok)))), budget):
            if index == 0:
                try:
                    nets.append(_route_net(t.text))
                except ValueError as exc:
                    raise RouteSyntaxError(f"bad target net: {exc}", off) from None
            else:
                gws.append(_parse_gateway(t, off))
    if len(toks) < (3 if hops != -1 else 2):
        end = base + len(stmt.rstrip(_SPACE))
        raise RouteSyntaxError(
            f"statement {stmt.strip()!r} has no gateway (expected NET [HOPS] GATEWAY...)", end
        )
    priority = gws[-1].priority  # one variable per statement in the kernel: the last one wins
    if strict:
        for g in gws:
            if g.priority != priority:
                raise RouteSyntaxError(
                    f"gateway {g.nid} has priority {g.priority} but the kernel applies the "
                    f"statement's last priority ({priority}) to every gateway; split the "
                    "statement",
                    g.offset,
                )
    out: list[tuple[KRoute, int]] = []
    for net in nets:
        for g in gws:
            if g.nid.net == net:
                raise RouteSyntaxError(
                    f"gateway {g.nid} is on the target net {net} itself", g.offset
                )
            out.append((KRoute(str(net), str(g.nid), hops, priority), g.offset))
    return out


def _parse_gateway(t: _Text, token_offset: int) -> _Gw:
    text = t.text
    colon = text.find(":")
    priority = 0
    if colon >= 0:
        prio = text[colon + 1 :]
        if not _DIGITS.fullmatch(prio):
            raise RouteSyntaxError(
                f"bad priority {prio!r} in gateway {text!r} (expected an unsigned integer)",
                t.at(colon + 1),
            )
        priority = int(prio)
        if priority > _U32_MAX:
            raise RouteSyntaxError(
                f"priority {prio} exceeds {_U32_MAX} (the kernel's %u would wrap it)",
                t.at(colon + 1),
            )
        text = text[:colon]
    try:
        nid = _kernel_nid(text)
    except ValueError as exc:
        raise RouteSyntaxError(f"bad gateway: {exc}", token_offset) from None
    return _Gw(nid, priority, token_offset)


def parse_routes_ordered(text: str, *, strict: bool = False) -> list[KRoute]:
    """Every route a ``routes=`` string asks for, in the order the kernel adds them.

    Duplicates are kept: the kernel keeps the *first* route per (net, gateway) and ignores
    later ones (``-EEXIST``), see ``effective_routes``.  ``strict`` also rejects what the kernel
    accepts but almost certainly was not meant: mixed priorities in one statement, and the
    same (net, gateway) given twice with different hop or priority.
    Raises ``RouteSyntaxError`` (``RouteBudgetError`` for buffer exhaustion).
    """
    stmts = _statements(text)
    budget = _Budget()
    for off, stmt in stmts:
        budget.alloc(stmt, off)
    out: list[KRoute] = []
    seen: dict[tuple[str, str], KRoute] = {}
    for off, stmt in stmts:
        inner = _Budget()
        inner.live = budget.live
        for route, gw_off in _parse_statement(stmt, off, inner, strict):
            first = seen.setdefault((route.net, route.gateway), route)
            if strict and first != route:
                raise RouteSyntaxError(
                    f"route to {route.net} via {route.gateway} given again with hop "
                    f"{route.hop} priority {route.priority}; the kernel keeps the first "
                    f"(hop {first.hop} priority {first.priority})",
                    gw_off,
                )
            out.append(route)
        budget.free(stmt)
    return out


def parse_routes(text: str, *, strict: bool = False) -> list[KRoute]:
    """Parse a kernel ``routes=`` string: the sorted set of routes it asks for.

    See ``parse_routes_ordered`` for ``strict`` and errors.
    """
    return sorted(set(parse_routes_ordered(text, strict=strict)))


def effective_routes(text: str) -> list[KRoute]:
    """What the kernel installs: the first route per (net, gateway) wins; sorted."""
    first: dict[tuple[str, str], KRoute] = {}
    for r in parse_routes_ordered(text):
        first.setdefault((r.net, r.gateway), r)
    return sorted(first.values())


def route_conflicts(routes: Iterable[KRoute]) -> list[tuple[KRoute, KRoute]]:
    """Pairs of routes with the same (net, gateway) but different hop or priority."""
    by_key: dict[tuple[str, str], list[KRoute]] = {}
    for r in sorted(set(routes)):
        by_key.setdefault((r.net, r.gateway), []).append(r)
    return [(a, b) for key in sorted(by_key) for a, b in itertools.combinations(by_key[key], 2)]


# ----------------------------------------------------------------------------- folding


def _num_item(first: int, last: int, step: int) -> str:
    if first == last:
        return str(first)
    if step == 1:
        return f"{first}-{last}"
    return f"{first}-{last}/{step}"


def fold_numbers(numbers: Iterable[int]) -> str:
    """Bracket items for a set of non-negative ints, fewest bytes: ``1-4,7,10-20/2``.

    Items are disjoint runs in sorted order.  Strides appear only when they divide the run
    exactly, are > 1 and save bytes over listing; numbers beyond 2**31-1 stay literal items
    (the kernel's ``%d`` would wrap them).  Not bracketed.  Raises ``ValueError`` when empty
    or negative.
    """
    v = sorted(set(numbers))
    if not v:
        raise ValueError("nothing to fold")
    if v[0] < 0:
        raise ValueError(f"negative number {v[0]}")
    n = len(v)
    # best[i] covers v[:i]: (bytes incl. one comma per item, strided items, items)
    best: list[tuple[int, int, int]] = [(0, 0, 0)] + [(10**18, 0, 0)] * n
    back: list[tuple[int, int]] = [(0, 1)] * (n + 1)
    run_start = 0  # start of the longest arithmetic run ending at v[i-1]
    for i in range(1, n + 1):
        last = i - 1
        if last >= 2 and v[last] - v[last - 1] != v[last - 1] - v[last - 2]:
            run_start = last - 1
        elif last < 2:
            run_start = 0
        # a run's cost only grows with its start, so the run start is optimal; one later
        # start too, so that a shared boundary element goes to the earlier run on ties
        candidates = {last, max(last - 1, run_start), run_start, min(run_start + 1, last)}
        for j in sorted(candidates, reverse=True):
            if j < last and v[last] > _INT_MAX:
                continue  # sorted, so the whole run would need the kernel's %d
            step = v[j + 1] - v[j] if j < last else 1
            strided = 1 if j < last and step > 1 else 0
            prev = best[j]
            text_len = len(_num_item(v[j], v[last], step))
            cand = (prev[0] + text_len + 1, prev[1] + strided, prev[2] + 1)
            if cand < best[i]:
                best[i] = cand
                back[i] = (j, step)
    items: list[str] = []
    i = n
    while i > 0:
        j, step = back[i]
        items.append(_num_item(v[j], v[i - 1], step))
        i = j
    return ",".join(reversed(items))


def _bracket(values: Iterable[int]) -> str:
    return _bracket_set(frozenset(values))


@functools.lru_cache(maxsize=1 << 12)
def _bracket_set(values: frozenset[int]) -> str:
    body = fold_numbers(values)
    return body if body.isdigit() else f"[{body}]"


def _fold_ipv4(addrs: set[tuple[int, int, int, int]]) -> list[tuple[frozenset[int], ...]]:
    """Disjoint products of octet sets covering ``addrs`` exactly; fewest, then shortest.

    Blocks start as single addresses and merge along one octet at a time when all other
    octets' sets are equal, so each block stays an exact product.  Every order of merging the
    octets that vary is tried (right to left first, which wins ties).
    """
    varying = [d for d in range(3, -1, -1) if len({a[d] for a in addrs}) > 1]
    best: list[tuple[frozenset[int], ...]] = []
    best_score: tuple[int, int] | None = None
    for order in itertools.permutations(varying):
        blocks = {tuple(frozenset([x]) for x in a) for a in addrs}
        for dim in order:
            merged: dict[tuple[frozenset[int], ...], set[int]] = {}
            for b in blocks:
                merged.setdefault(b[:dim] + b[dim + 1 :], set()).update(b[dim])
            blocks = {(*k[:dim], frozenset(s), *k[dim:]) for k, s in merged.items()}
        result = sorted(blocks, key=lambda b: tuple(min(s) for s in b))
        score = (len(result), sum(len(_ipv4_text(b)) for b in result))
        if best_score is None or score < best_score:
            best, best_score = result, score
    return best


def _ipv4_text(block: tuple[frozenset[int], ...]) -> str:
    return ".".join(_bracket_set(s) for s in block)


def fold_gateways(nids: Iterable[str]) -> list[str]:
    """Fold single NIDs into the fewest kernel-valid range tokens (no priority suffix).

    ``['10@gni', '11@gni', '12@gni', '20@gni']`` -> ``['[10-12,20]@gni']``;
    ``10.10.1.1..4@o2ib1`` -> ``['10.10.1.[1-4]@o2ib1']``; IPv4 folds several octets when the
    result is an exact product (``10.10.[1-2].[1-4]@o2ib1``).  NIDs on several nets give tokens
    per net, nets in sorted order.  Never ``*``, never a stride that does not divide its range.
    Raises ``ValueError`` for a bad NID.
    """
    by_net: dict[Net, set[Nid]] = {}
    for text in nids:
        nid = _kernel_nid(text)
        by_net.setdefault(nid.net, set()).add(nid)
    out: list[str] = []
    for net in sorted(by_net):
        members = by_net[net]
        if net.ip_based:
            addrs = {_ipv4_tuple(n.addr) for n in members}
            tokens = [f"{_ipv4_text(b)}@{net}" for b in _fold_ipv4(addrs)]
        else:
            tokens = [f"{_bracket(int(n.addr) for n in members)}@{net}"]
        _verify(tokens, {str(n) for n in members})
        out.extend(tokens)
    return out


def _ipv4_tuple(addr: str) -> tuple[int, int, int, int]:
    a, b, c, d = (int(x) for x in addr.split("."))
    return (a, b, c, d)


def _verify(tokens: Sequence[str], expected: set[str]) -> None:
    got: list[str] = []
    for tok in tokens:
        got.extend(str(_kernel_nid(t)) for t in expand_brackets(tok))
    if len(got) != len(set(got)) or set(got) != expected:
        raise RuntimeError(f"internal error: folding {sorted(expected)} gave {list(tokens)}")


def fold_nets(nets: Iterable[str]) -> list[str]:
    """Net tokens for ``routes=``: ``['o2ib1', 'o2ib2', 'tcp']`` -> ``['o2ib[1-2]', 'tcp']``."""
    by_lnd: dict[str, set[int]] = {}
    for text in nets:
        net = _route_net(text)
        by_lnd.setdefault(net.lnd, set()).add(net.number)
    out: list[str] = []
    for lnd in sorted(by_lnd):
        numbers = by_lnd[lnd]
        out.append(str(Net(lnd, min(numbers))) if len(numbers) == 1 else lnd + _bracket(numbers))
    return out


# ----------------------------------------------------------------------------- routes= producer


def _net_order(net: Net) -> tuple[int, str]:
    return (net.number, net.lnd)


def _statements_for(
    net_tok: str, hop: int, priority: int, gws: Sequence[Nid], limit: int
) -> list[str]:
    """Statements for one (net, hop, priority) group; ``gws`` sorted.

    Split into consecutive chunks so that each statement's expanded gateways and token copies
    stay within ``limit`` bytes of kernel text buffers and its text within one buffer.
    """
    head = net_tok if hop == -1 else f"{net_tok} {hop}"
    suffix = f":{priority}" if priority else ""
    max_text = TEXTBUF_SINGLE_MAX - TEXTBUF_HEADER - 1 - 64
    costs = [_Budget.cost(f"{n}{suffix}") for n in gws]
    chunks: list[Sequence[Nid]] = []
    start, acc = 0, 0
    for i, c in enumerate(costs):
        if i > start and acc + c > limit - 4096:  # leave room for the token copies
            chunks.append(gws[start:i])
            start, acc = i, 0
        acc += c
    chunks.append(gws[start:])
    out: list[str] = []
    while chunks:
        chunk = chunks.pop(0)
        tokens = [t + suffix for t in fold_gateways(str(n) for n in chunk)]
        stmt = " ".join([head, *tokens])
        cost = sum(_Budget.cost(f"{n}{suffix}") for n in chunk)
        cost += sum(_Budget.cost(t) for t in tokens)
        if (cost > limit or len(stmt) > max_text) and len(chunk) > 1:
            half = len(chunk) // 2
            chunks[:0] = [chunk[:half], chunk[half:]]
            continue
        out.append(stmt)
    return out


def format_routes(routes: Iterable[KRoute], *, merge_nets: bool = False) -> str:
    """The shortest reasonable ``routes=`` string for ``routes``.

    One statement per (net, hop, priority), gateways folded, ``:priority`` after every gateway
    token (omitted for 0), the hop written whenever it is not -1, statements joined by ``; ``
    and ordered by net number, priority, hop.  A statement that would exhaust the kernel's text
    buffers is split.  ``merge_nets`` also merges nets with identical gateway sets
    (``o2ib[1-2] 1 [10-13]@gni``).  ``parse_routes(format_routes(x)) == sorted(set(x))``.

    Routes are canonicalised; raises ``ValueError`` for a bad net, NID, hop or priority.
    The result may exceed ``MODULE_PARAM_MAX``: check with ``param_fits``.
    """
    groups: dict[tuple[Net, int, int], set[Nid]] = {}
    for r in routes:
        net = _route_net(r.net)
        gw = _check_gateway(_kernel_nid(r.gateway), net)
        _check_hop_priority(r.hop, r.priority)
        groups.setdefault((net, r.hop, r.priority), set()).add(gw)
    if not groups:
        return ""
    keyed: list[tuple[tuple[int, str, int, int, str, str], str, int, int, list[Nid]]] = []
    if merge_nets:
        by_gws: dict[tuple[int, int, frozenset[Nid]], list[Net]] = {}
        for (net, hop, prio), gws in groups.items():
            by_gws.setdefault((hop, prio, frozenset(gws)), []).append(net)
        for (hop, prio, gw_set), nets in by_gws.items():
            first = min(nets, key=_net_order)
            gw_sorted = sorted(gw_set, key=lambda n: n.sort_key())
            gw_text = " ".join(str(n) for n in gw_sorted)
            for net_tok in fold_nets(str(n) for n in nets):
                key = (*_net_order(first), prio, hop, net_tok, gw_text)
                keyed.append((key, net_tok, hop, prio, gw_sorted))
    else:
        for (net, hop, prio), gws in groups.items():
            key = (*_net_order(net), prio, hop, "", "")
            keyed.append((key, str(net), hop, prio, sorted(gws, key=lambda n: n.sort_key())))
    keyed.sort(key=lambda k: k[0])
    limit = TEXTBUF_BUDGET - 4096
    while True:
        stmts: list[str] = []
        for _key, net_tok, hop, prio, gws_list in keyed:
            stmts.extend(_statements_cached(net_tok, hop, prio, tuple(gws_list), limit))
        text = "; ".join(stmts)
        if _fits_budget(stmts):
            return text
        if limit <= 4096:
            raise ValueError("routes too large for the kernel's text buffers")
        limit -= 4096


@functools.lru_cache(maxsize=1 << 16)
def _statements_cached(
    net_tok: str, hop: int, priority: int, gws: tuple[Nid, ...], limit: int
) -> tuple[str, ...]:
    # client classes of one site share most of their (net, priority) gateway groups
    return tuple(_statements_for(net_tok, hop, priority, gws, limit))


class _Peak(_Budget):
    """A budget that records the highest level one statement's expansion reaches."""

    def __init__(self) -> None:
        super().__init__()
        self.peak = 0

    def alloc(self, text: str, offset: int) -> None:
        super().alloc(text, offset)
        self.peak = max(self.peak, self.live)


@functools.lru_cache(maxsize=1 << 16)
def _statement_peak(stmt: str) -> int:
    peak = _Peak()
    for _route in _parse_statement(stmt, 0, peak, False):
        pass
    return peak.peak


def _fits_budget(stmts: Sequence[str]) -> bool:
    """What ``parse_routes_ordered`` checks, statement by statement: all statement buffers are
    allocated first and freed one by one, so statement ``i`` expands on top of the buffers of
    statements ``i..n``.  Each statement's own peak is computed once and cached."""
    pending = sum(_Budget.cost(s) for s in stmts)
    if pending > TEXTBUF_BUDGET:
        return False
    for stmt in stmts:
        try:
            if pending + _statement_peak(stmt) > TEXTBUF_BUDGET:
                return False
        except RouteBudgetError:
            return False
        pending -= _Budget.cost(stmt)
    return True


# ----------------------------------------------------------------------------- networks=


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i] in _SPACE:
        i += 1
    return i


def _span_until(s: str, i: int, stop: str) -> int:
    while i < len(s) and s[i] not in stop:
        i += 1
    return i


def _check_cpt(expr: str, offset: int) -> None:
    """A ``cfs_expr_list`` in brackets: ``[0,2-3,4-8/2]`` (bounds are per node, not checked)."""
    body = expr[1:-1]
    for part in body.split(","):
        m = _CPT_ITEM.fullmatch(part.strip(_SPACE))
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
        name_at = i
        i = _span_until(text, i, _SPACE + ":()[],")
        name = text[name_at:i]
        i = _skip_space(text, i)
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
        name_at = i
        i = _span_until(inner, i, _SPACE + "[],")
        name = inner[name_at:i]
        i = _skip_space(inner, i)
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


def param_fits(value: str) -> bool:
    """Whether Linux accepts ``value`` as a string module parameter (at most 1024 bytes)."""
    return len(value.encode()) <= MODULE_PARAM_MAX
