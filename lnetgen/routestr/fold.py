"""Folding numbers, gateway NIDs and nets into the fewest kernel-valid bracket tokens."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence

from lnetgen.nodes import Net, Nid
from lnetgen.routestr.kernel import INT_MAX
from lnetgen.routestr.kroute import kernel_nid, route_net
from lnetgen.routestr.ranges import expand_brackets


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
            if j < last and v[last] > INT_MAX:
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
        nid = kernel_nid(text)
        by_net.setdefault(nid.net, set()).add(nid)
    out: list[str] = []
    for net in sorted(by_net):
        members = by_net[net]
        v6 = sorted(n for n in members if ":" in n.addr)
        if v6:  # IPv6 addresses are not folded: one token each (no kernel grammar carries them)
            out.extend(str(n) for n in v6)
            members = {n for n in members if ":" not in n.addr}
            if not members:
                continue
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
        got.extend(str(kernel_nid(t)) for t in expand_brackets(tok))
    if len(got) != len(set(got)) or set(got) != expected:
        raise RuntimeError(f"internal error: folding {sorted(expected)} gave {list(tokens)}")


def fold_nets(nets: Iterable[str]) -> list[str]:
    """Net tokens for ``routes=``: ``['o2ib1', 'o2ib2', 'tcp']`` -> ``['o2ib[1-2]', 'tcp']``."""
    by_lnd: dict[str, set[int]] = {}
    for text in nets:
        net = route_net(text)
        by_lnd.setdefault(net.lnd, set()).add(net.number)
    out: list[str] = []
    for lnd in sorted(by_lnd):
        numbers = by_lnd[lnd]
        out.append(str(Net(lnd, min(numbers))) if len(numbers) == 1 else lnd + _bracket(numbers))
    return out
