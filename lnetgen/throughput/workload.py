"""A workload as IOR runs it: who writes (or reads) which OSTs.

``file-per-process``: every rank streams its own file, striped over ``stripe_count`` OSTs
(``1``: the papers' single-stripe files, pre-placed with ``lfs setstripe`` so no two ranks
contend for an OST unless there are more ranks than OSTs); rank ``j`` of a file system gets
OSTs ``j*K .. j*K+K-1`` (mod its OST count), as ``lfs setstripe -i`` pre-population does.
``shared-file``: ``files`` shared files, each on its own pool (the file system's OSTs cut in
``files`` consecutive slices, seed 001's ten pools of 144 OSTs), striped over the whole pool
or ``stripe_count`` of it; every rank of a file writes an equal part to each of its OSTs.

Ranks are split over the chosen file systems in proportion to their OSTs (seed 001: 1,880 /
1,880 / 18,800 nodes) and sit ``ranks_per_node`` to a node, on nodes chosen:

* ``linear``: the first clients in node order (what a job launcher gives an empty machine);
* ``random``: a random draw (numpy, seeded with ``seed``), seed 001's "randomly placed";
* ``placed``: ``lnetgen place clients`` -- per OSS the free clients nearest to its routers
  (seed 000 §5; one rank per node, as many nodes as the OSS has ranks: OSS with different
  OST counts are placed alike, ``workload_nodes``);
* a node set (``"nid[00001-05184]"``, ``"nid001,nid005"``): those clients, in node order.

``background`` (a percentage) adds other jobs' I/O, which seed 004 measured under: that share
of the clients outside the job (a random draw, seeded with ``seed``) each streams one
single-stripe file to the OSTs of the job's file systems (or of ``osts``) in turn, from a
random first one -- the same whichever OSTs the job's own ranks choose -- for as long as the
job runs.  They share every resource with the job's ranks and count in none of its figures
(``with_background``).

A workload is written as a YAML mapping (``--workload FILE``) or inline
(``--workload pattern=shared-file,files=10,nodes=random``); the keys are the fields of
:class:`WorkloadSpec`.  An empty value is refused, as a key given twice is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from lnetgen.diagnostics import Diagnostic, InputError, UsageError
from lnetgen.model import Site
from lnetgen.plan import Plan
from lnetgen.traffic import IntArray, PlanIndex, input_error
from lnetgen.traffic.settings import FloatArray
from lnetgen.yamlsrc import Source

PATTERNS = ("file-per-process", "shared-file")
OPS = ("write", "read")
NODE_CHOICES = ("linear", "random", "placed")


@dataclass(frozen=True)
class WorkloadSpec:
    """What runs; see the module docstring.  ``ranks`` None: ``files_per_ost`` ranks per OST
    (file-per-process) or one per OST (shared-file), at most ``ranks_per_node`` per client:
    the default one per OST is cut to what the clients hold (a site with fewer clients than
    OSTs still gets its default prediction), but a ``files_per_ost`` above 1 that the clients
    cannot hold is refused, naming the numbers, as ``ranks`` beyond them is."""

    name: str = "ior"
    pattern: str = "file-per-process"
    op: str = "write"
    filesystems: tuple[str, ...] = ()
    ranks: int | None = None
    files_per_ost: int = 1
    ranks_per_node: int = 1
    nodes: str = "linear"
    seed: int = 0
    stripe_count: int = 1  # shared-file: 0 = the whole pool
    files: int = 1
    osts: str = ""  # OST indices to use ("0-11,24-35"), of the one file system named
    ost_choice: str = "index"  # index | nearest (seed 004: each rank's nearest free OST)
    background: int = 0  # percent of the other clients streaming for other jobs (seed 004)
    #: Where each key was given in a workload file: (key, file, line, column), key "" for the
    #: document itself; empty inline.
    source: tuple[tuple[str, str, int, int], ...] = field(default=(), compare=False, repr=False)

    def error(self, key: str, message: str) -> InputError:
        """An input error about ``key``: at its line and column when the workload came from a
        file, else about ``--workload``."""
        return _error(self.source, key, message)

    def label(self) -> str:
        parts = [self.pattern, self.op, f"nodes={self.nodes}"]
        if self.filesystems:
            parts.append("fs=" + "+".join(self.filesystems))
        if self.background:
            parts.append(f"background={self.background}%")
        return f"{self.name} ({', '.join(parts)})"


_INT_KEYS = {
    "ranks", "files_per_ost", "ranks_per_node", "seed", "stripe_count", "files", "background"
}  # fmt: skip
#: Upper bound of each integer key (a percentage for ``background``).
_INT_MAX = {"background": 100}
#: The most OST indices ``osts`` may list (Lustre's own limit on a file system's OSTs is far
#: lower), counted before any set is built.
MAX_OSTS = 100_000
#: The most (rank, OST) pairs a workload may make, and (rank, OST, router) subflows a
#: prediction may lay out, both counted before they are built: bounded memory.  Blue Waters'
#: ten shared files (3.3 million pairs, 13 million subflows) peak at about 570 MB; four
#: million ranks, a thousand to a node, at 1.1 GB (Spider) to 1.4 GB (Blue Waters).
MAX_PAIRS = 4_000_000
MAX_SUBFLOWS = 16_000_000
#: Keys whose value may hold commas (``osts=0-11,24-35``, ``nodes=nid001,nid005``): inline, a
#: part without ``=`` after one of them continues its value.  In a file ``osts`` may also be
#: a YAML list; ``nodes`` is one string (a list is refused: ``nodes: "nid001,nid005"``).
_COMMA_KEYS = ("osts", "nodes")
_LIST_KEYS = ("osts",)
_KEYS = tuple(f.name for f in fields(WorkloadSpec) if f.name != "source")


def _error(source: Sequence[tuple[str, str, int, int]], key: str, message: str) -> InputError:
    """``key: message`` (E-WORKLOAD) at the key's place in its file (at the document when the
    file does not give the key), or about an inline ``--workload``: either way an input error
    of the command line's (exit 2), not of the inventory's."""
    for k, file, line, col in sorted(source, key=lambda e: e[0] != key):  # the key, else ""
        if k in (key, ""):
            path = f"$.{key}" if k else "$"
            return UsageError([Diagnostic(file, line, col, "error", "E-WORKLOAD", path, message)])
    return input_error("E-WORKLOAD", f"--workload: {message}")


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _kind(value: object) -> str:
    """What a YAML value that is not a string or a number is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, list):
        return "a list"
    return "a mapping" if isinstance(value, dict) else type(value).__name__


def spec_from_mapping(
    data: Mapping[str, object], source: Sequence[tuple[str, str, int, int]] = ()
) -> WorkloadSpec:
    """A ``WorkloadSpec`` from a parsed mapping; ``InputError`` (E-WORKLOAD) naming the key,
    at its place in the file when ``source`` locates it.  A key the pattern does not use
    (``files`` for file-per-process, ``files_per_ost`` for a shared file or beside ``ranks``)
    is an error when it is given a value other than its default, not silently ignored."""
    got: dict[str, object] = {}

    def bad(key: str, message: str) -> InputError:
        return _error(source, key, message)

    for key, value in data.items():
        if key not in _KEYS:
            near = close_key(key)
            hint = f"did you mean {near}?" if near else f"known: {', '.join(_KEYS)}"
            raise bad(key, f"unknown key {key!r} ({hint})")
        if key in _INT_KEYS:
            try:
                if not _scalar(value):
                    raise ValueError
                n = int(str(value))
            except ValueError:
                raise bad(key, f"{key} must be an integer") from None
            low = 0 if key in ("seed", "stripe_count", "background") else 1
            if n < low or n > _INT_MAX.get(key, 10_000_000):
                raise bad(key, f"{key} {n} is out of range")
            got[key] = n
        elif key == "filesystems":
            items = value if isinstance(value, list) else [value]
            if not all(_scalar(v) for v in items):
                raise bad(key, "filesystems is a name, names joined with '+', or a list of names")
            got[key] = tuple(p for v in items for p in str(v).split("+") if p)
        elif key in _LIST_KEYS and isinstance(value, list):
            if not all(_scalar(v) for v in value):
                raise bad(key, f"{key} is a list of indices or ranges")
            got[key] = ",".join(str(v) for v in value)
        elif not _scalar(value):
            raise bad(key, f"{key} must be a string or a number, not {_kind(value)}")
        elif not str(value).strip() and key not in _COMMA_KEYS:  # their own words below
            default = getattr(WorkloadSpec, key)
            raise bad(key, f"{key} is empty (leave the key out for its default, {default})")
        else:
            got[key] = str(value)
    if "filesystems" in got and not got["filesystems"]:
        raise bad("filesystems", "filesystems names no file system (leave the key out for all)")
    if "nodes" in got and not str(got["nodes"]).strip():
        raise bad("nodes", "nodes is empty (linear, random, placed or a node set)")
    if "osts" in got and not str(got["osts"]).strip():
        raise bad("osts", "osts lists no OST (leave the key out for all of them)")
    spec = WorkloadSpec(**got, source=tuple(source))  # type: ignore[arg-type]
    if spec.pattern not in PATTERNS:
        raise bad("pattern", f"pattern must be one of {', '.join(PATTERNS)}")
    if spec.ost_choice not in ("index", "nearest"):
        raise bad("ost_choice", "ost_choice must be index or nearest")
    if spec.op not in OPS:
        raise bad("op", "op must be write or read")
    if spec.pattern == "file-per-process" and spec.stripe_count < 1:
        raise bad("stripe_count", "stripe_count must be 1 or more")
    if spec.pattern == "file-per-process" and spec.files != 1:
        raise bad("files", "files is for pattern=shared-file (file-per-process: one per rank)")
    if spec.pattern == "shared-file" and spec.files_per_ost != 1:
        raise bad("files_per_ost", "files_per_ost is for pattern=file-per-process")
    if spec.ranks is not None and spec.files_per_ost != 1:
        raise bad("files_per_ost", "files_per_ost sets the ranks when ranks is not given")
    if spec.osts:
        _ost_indices(spec)  # its syntax, before any site is read
    _check_nearest(spec)
    return spec


def close_key(key: str) -> str:
    """The workload key ``key`` is most likely a misspelling of (``rank``: ranks), or ""."""
    import difflib

    near = difflib.get_close_matches(key, _KEYS, n=1, cutoff=0.75)
    return near[0] if near else ""


def _parts(text: str) -> list[str]:
    """``text`` cut at its commas outside brackets: ClusterShell's ``nid[001,005]`` is one."""
    parts: list[str] = []
    depth = start = 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def parse_inline(text: str) -> WorkloadSpec:
    """``key=value,key=value`` (file systems joined with ``+``).  A comma inside brackets
    never cuts (``nodes=nid[001,005]``), and a part without ``=`` after ``osts=`` or ``nodes=``
    continues that list (``osts=0-11,24-35``, ``nodes=nid001,nid005``) until the next
    ``key=``; anywhere else it is refused, with the way out."""
    data: dict[str, object] = {}
    last = ""
    for part in _parts(text):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq:
            if last in _COMMA_KEYS:
                data[last] = f"{data[last]},{part.strip()}"
                continue
            raise input_error(
                "E-WORKLOAD",
                f"--workload: {part!r} is not key=value (only osts and nodes run on over "
                "commas; or write the workload in a file)",
            )
        last = key.strip()
        if last in data:
            raise input_error("E-WORKLOAD", f"--workload: {last} is given twice")
        data[last] = value.strip()
    return spec_from_mapping(data)


@dataclass(frozen=True, eq=False)
class Ranks:
    """The ranks of a workload: ``node[j]`` the client index of rank ``j``; its data goes to
    OSTs as pairs ``(pair_rank, pair_ost, pair_w)`` (``pair_w`` sums to 1 per rank).  OST ids
    index ``ost_server`` (an index into ``PlanIndex.servers``) and ``ost_label``."""

    spec: WorkloadSpec
    node: IntArray
    pair_rank: IntArray
    pair_ost: IntArray
    pair_w: FloatArray
    ost_server: IntArray
    ost_label: tuple[str, ...]

    @property
    def nodes_used(self) -> int:
        return len(np.unique(self.node))


def _osts(site: Site, ix: PlanIndex, spec: WorkloadSpec) -> dict[str, list[tuple[int, int]]]:
    """Per file system (inventory order): its OSTs as (index, server id), by index."""
    have = [f.name for f in site.filesystems]
    wanted = spec.filesystems
    for fs in wanted:
        if fs not in have:
            raise spec.error("filesystems", f"no file system {fs!r} (have: {', '.join(have)})")
    out: dict[str, list[tuple[int, int]]] = {}
    for fs in have:
        if wanted and fs not in wanted:
            continue
        osts = sorted(
            (o, ix.server_id(s.name))
            for s in site.servers
            if s.fs == fs and s.role == "oss"
            for o in s.osts
        )
        if osts:
            out[fs] = osts
    if not out:
        raise spec.error("filesystems", "the chosen file systems have no OSTs")
    return out


def _ost_indices(spec: WorkloadSpec) -> set[int]:
    """The OST indices ``spec.osts`` lists ("0-11,24-35", as ``lfs setstripe -o`` takes them)."""
    want: set[int] = set()
    spans: list[tuple[int, int]] = []
    for part in spec.osts.split(","):
        lo, dash, hi = part.strip().partition("-")
        try:
            a, b = int(lo, 0), int(hi, 0) if dash else int(lo, 0)
        except ValueError:
            raise spec.error("osts", f"osts: {part!r} is not an index or range") from None
        if a < 0 or b < a:
            raise spec.error("osts", f"osts: bad range {part!r}")
        spans.append((a, b))
    if sum(b - a + 1 for a, b in spans) > MAX_OSTS:
        raise spec.error("osts", f"osts lists more than {MAX_OSTS:,} OSTs")
    for a, b in spans:
        want.update(range(a, b + 1))
    return want


def _restrict(
    per_fs: dict[str, list[tuple[int, int]]], spec: WorkloadSpec
) -> dict[str, list[tuple[int, int]]]:
    """Only the OSTs ``spec.osts`` lists, of the one file system chosen."""
    if len(per_fs) != 1:
        raise spec.error("osts", "osts needs one file system (filesystems=NAME)")
    want = _ost_indices(spec)
    ((fs, osts),) = per_fs.items()
    have = {o for o, _ in osts}
    missing = sorted(want - have)
    if missing:
        raise spec.error("osts", f"osts: {fs} has no OST {missing[0]}")
    return {fs: [(o, s) for o, s in osts if o in want]}


def _split(total: int, sizes: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``sizes`` (largest remainder, ties to the first)."""
    whole = sum(sizes)
    exact = [total * s / whole for s in sizes]
    got = [int(e) for e in exact]
    order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - got[i]), i))
    for i in order[: total - sum(got)]:
        got[i] += 1
    return got


def _widest(spec: WorkloadSpec, m: int) -> int:
    """The most OSTs one rank's file spans on a file system of ``m`` OSTs (a bound on its
    pairs, counted before any is built)."""
    if spec.pattern == "file-per-process":
        return min(spec.stripe_count, m)
    pool = -(-m // min(spec.files, m))  # the widest of the consecutive slices
    return pool if spec.stripe_count == 0 else min(spec.stripe_count, pool)


def build_ranks(site: Site, plan: Plan, ix: PlanIndex, spec: WorkloadSpec) -> Ranks:
    """The ranks of ``spec`` on ``site``; ``InputError`` (E-WORKLOAD) when it cannot run
    (too few clients, an unknown file system, placement that cannot be honoured)."""
    from lnetgen.throughput.workload_nodes import nearest_osts, rank_nodes

    per_fs = _osts(site, ix, spec)
    if spec.osts:
        per_fs = _restrict(per_fs, spec)
    labels: list[str] = []
    servers: list[int] = []
    base: dict[str, int] = {}
    for fs, osts in per_fs.items():
        base[fs] = len(labels)
        labels += [f"{fs}-OST{o:04x}" for o, _ in osts]
        servers += [s for _, s in osts]
    sizes = [len(v) for v in per_fs.values()]
    nost = sum(sizes)
    if spec.ranks is not None:
        total = spec.ranks
    else:  # one per OST (x files_per_ost), as many as the clients can hold
        per_ost = spec.files_per_ost if spec.pattern == "file-per-process" else 1
        room = len(site.clients) * spec.ranks_per_node
        if per_ost > 1 and per_ost * nost > room:
            # asked for: refused as ranks= beyond the clients is, not cut without a word
            raise spec.error(
                "files_per_ost",
                f"files_per_ost {per_ost} wants {per_ost * nost:,} ranks ({per_ost} per OST x "
                f"{nost:,} OSTs); the site's {len(site.clients):,} clients hold {room:,} at "
                f"ranks_per_node {spec.ranks_per_node}",
            )
        total = min(per_ost * nost, room)
    need = -(-total // spec.ranks_per_node)
    if need > len(site.clients):
        key = "ranks" if spec.ranks is not None else "nodes"
        raise spec.error(key, f"{need} nodes wanted, the site has {len(site.clients)} clients")
    counts = _split(total, sizes)
    npairs = sum(n * _widest(spec, m) for n, m in zip(counts, sizes, strict=True))
    if npairs > MAX_PAIRS:
        key = "ranks" if spec.ranks is not None else "stripe_count"
        key = "files_per_ost" if spec.ranks is None and spec.files_per_ost > 1 else key
        raise spec.error(
            key,
            f"{total:,} ranks make up to {npairs:,} (rank, OST) pairs: lnetgen models at most "
            f"{MAX_PAIRS:,}",
        )
    pr: list[IntArray] = []
    po: list[IntArray] = []
    pw: list[FloatArray] = []
    first = 0
    for (fs, osts), n in zip(per_fs.items(), counts, strict=True):
        m = len(osts)
        j = np.arange(n, dtype=np.int64)
        if spec.pattern == "file-per-process":
            k = min(spec.stripe_count, m)
            ost = (j[:, None] * k + np.arange(k)[None, :]) % m
            rank = np.repeat(j, k)
            pr.append(first + rank)
            po.append(base[fs] + ost.reshape(-1))
            pw.append(np.full(n * k, 1.0 / k))
        else:
            nfiles = min(spec.files, m)
            bounds = np.linspace(0, m, nfiles + 1).astype(np.int64)
            rfile = (j * nfiles) // max(n, 1)  # contiguous blocks of ranks per file
            for f in range(nfiles):
                pool = np.arange(bounds[f], bounds[f + 1])
                width = len(pool) if spec.stripe_count == 0 else min(spec.stripe_count, len(pool))
                mine = j[rfile == f]
                pr.append(first + np.repeat(mine, width))
                po.append(base[fs] + np.tile(pool[:width], len(mine)))
                pw.append(np.full(len(mine) * width, 1.0 / width))
        first += n
    pair_rank = np.concatenate(pr)
    pair_ost = np.concatenate(po)
    pair_w = np.concatenate(pw)
    ost_server = np.asarray(servers, dtype=np.int64)
    node = rank_nodes(site, plan, ix, spec, total, pair_rank, pair_ost, ost_server)
    if spec.ost_choice == "nearest":
        _check_nearest(spec)
        pair_ost = nearest_osts(ix, node, pair_rank, ost_server)
    return Ranks(spec, node, pair_rank, pair_ost, pair_w, ost_server, tuple(labels))


def _check_nearest(spec: WorkloadSpec) -> None:
    if spec.ost_choice == "nearest" and (
        spec.pattern != "file-per-process" or spec.stripe_count != 1 or spec.nodes == "placed"
    ):
        raise spec.error(
            "ost_choice",
            "ost_choice=nearest is for single-stripe file-per-process ranks on nodes not "
            "already placed",
        )


#: What analyze, compare and report predict when no workload is given: IOR file-per-process,
#: one single-stripe file per OST of every file system, on randomly drawn nodes (seed 0).
DEFAULT = WorkloadSpec(name="ior", nodes="random")


def load_workload(arg: str) -> WorkloadSpec:
    """``--workload``: a YAML file holding a mapping, or inline ``key=value,...``.  Errors in
    a file carry its line and column (E-WORKLOAD)."""
    import os

    from lnetgen.yamlsrc import load_file

    if not arg.strip():
        raise input_error("E-WORKLOAD", "--workload is empty: a file, key=value,... or none")
    if "=" in arg and not os.path.exists(arg):
        return parse_inline(arg)
    if not os.path.lexists(arg):
        raise input_error(
            "E-WORKLOAD", f"--workload: no file {arg!r} (inline, the values are key=value,...)"
        )
    src = load_file(arg)
    if not isinstance(src.data, dict):
        raise InputError([src.diag((), "E-WORKLOAD", "a workload file holds a mapping")])
    # each key's place, and the document's ("") for errors about no key the file gives
    keys = [(str(k), src.file, *src.where((k,))) for k in src.data]
    source = (("", src.file, *src.where(())), *keys)
    if src.data and not any(str(k) in _KEYS for k in src.data):
        # A short file whose key is a workload key misspelt (``rank: 2``) is a workload file:
        # name the key.  Otherwise it may be any file: say so without echoing what it holds.
        near = [(str(k), close_key(str(k))) for k in src.data] if len(src.data) <= 2 else []
        for k, want in near:
            if want:
                raise _error(source, k, f"unknown key {k!r} (did you mean {want}?)")
        raise InputError(
            [src.diag((), "E-WORKLOAD", "not a workload file: no key is a workload key")]
        )
    return spec_from_mapping(
        {str(k): _as_written(src, (k,), v) for k, v in src.data.items()}, source
    )


def _as_written(src: Source, path: tuple[str | int, ...], value: object) -> object:
    """A number as the file writes it, as inline: YAML 1.1 would read ``osts: 010`` as OST 8,
    ``12:30`` as 750 and ``1_0`` as 10; a list's items alike.  Other values as parsed."""
    if isinstance(value, list):
        return [_as_written(src, (*path, i), v) for i, v in enumerate(value)]
    raw = src.raw.get(path)
    if isinstance(value, int | float) and not isinstance(value, bool) and raw and raw[1] is None:
        return raw[0]
    return value


def with_background(site: Site, spec: WorkloadSpec, ranks: Ranks) -> tuple[Ranks, int]:
    """The job's ``ranks`` followed by ``spec.background`` % of the other clients, one
    endless single-stripe stream each over the workload's OSTs (``ranks.ost_label``, see the
    module docstring); and the job's rank count."""
    njob = len(ranks.node)
    others = np.setdiff1d(np.arange(len(site.clients), dtype=np.int64), ranks.node)
    n = len(others) * spec.background // 100
    if n == 0:
        return ranks, njob
    rng = np.random.default_rng(spec.seed + 1)  # not the job's own draw
    nodes = np.sort(rng.choice(others, size=n, replace=False))
    nost = len(ranks.ost_label)
    ost = (int(rng.integers(nost)) + np.arange(n, dtype=np.int64)) % nost
    return (
        Ranks(
            spec,
            np.concatenate([ranks.node, nodes]),
            np.concatenate([ranks.pair_rank, njob + np.arange(n, dtype=np.int64)]),
            np.concatenate([ranks.pair_ost, ost]),
            np.concatenate([ranks.pair_w, np.ones(n)]),
            ranks.ost_server,
            ranks.ost_label,
        ),
        njob,
    )
