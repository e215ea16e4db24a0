"""Run the real OpenSM on a simulated copy of a fabric and count where its routes go.

``ibsim`` (ibsim-utils) simulates the fabric from the net file that :mod:`lnetgen.fabric`
writes; ``opensm -o`` (once mode) configures it through ``libumad2sim.so`` (preloaded, so no
kernel or hardware is involved); ``dump_fts`` (infiniband-diags) reads every switch's unicast
forwarding table back.  Every route between the two host classes of the fabric (compute nodes
and IO nodes on a compute fabric; routers and servers on a storage fabric) is then traced hop by
hop through those tables, and counted per spine and per leaf uplink.

Each simulator gets a private ``IBSIM_SOCKNAME`` (abstract unix sockets, nothing on disk) and
is stopped by its pid.  ``missing_tools()`` says what is not installed; nothing here installs
anything.
"""

from __future__ import annotations

import glob
import itertools
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx

from lnetgen.emit.opensm import MAX_REVERSE_HOPS, fabric_files
from lnetgen.fabric import (
    Host,
    Layout,
    apply_moves,
    fabric_hosts,
    fabric_of,
    guid_str,
    layout,
    plan_ports,
    render_net,
)
from lnetgen.model import Fabric, Site

#: Where distributions install the preload library (Debian: libumad2sim0, pulled by ibsim-utils).
UMAD2SIM_GLOBS = (
    "/usr/lib/*/umad2sim/libumad2sim.so",
    "/usr/lib64/umad2sim/libumad2sim.so",
    "/usr/lib/umad2sim/libumad2sim.so",
    "/usr/local/lib/umad2sim/libumad2sim.so",
    "/usr/local/lib64/umad2sim/libumad2sim.so",
)
#: Debian packages that provide the programs (for messages and for installers).
PACKAGES = ("opensm", "ibsim-utils", "infiniband-diags")


class SimError(RuntimeError):
    """A simulator program failed; the message carries the end of its log."""


def umad2sim() -> str:
    """Path of libumad2sim.so ('' when not installed); ``LNETGEN_UMAD2SIM`` overrides."""
    env = os.environ.get("LNETGEN_UMAD2SIM", "")
    if env:
        return env if os.path.exists(env) else ""
    for pattern in UMAD2SIM_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return ""


def missing_tools() -> list[str]:
    """The programs (and the preload library) that are not installed; empty when ready."""
    out = [p for p in ("ibsim", "opensm", "dump_fts") if shutil.which(p) is None]
    if not umad2sim():
        out.append("libumad2sim.so")
    return out


@dataclass(frozen=True)
class OpenSMSettings:
    """What opensm.conf sets for ftree; ``None`` leaves a file out."""

    io_guids: tuple[int, ...] | None = None
    cn_guids: tuple[int, ...] | None = None
    root_guids: tuple[int, ...] | None = None
    max_reverse_hops: int = 0

    def describe(self) -> str:
        files = [
            n
            for n, v in (("io", self.io_guids), ("cn", self.cn_guids), ("root", self.root_guids))
            if v is not None
        ]
        text = "+".join(files) + " files" if files else "no guid files"
        return f"{text}, max_reverse_hops {self.max_reverse_hops}"


@dataclass
class Direction:
    """Routes from one host class to the other."""

    routes: int = 0
    unrouted: int = 0
    spine: list[int] = field(default_factory=list)  # routes through spine k (layout order)
    uplink: dict[tuple[str, int], int] = field(default_factory=dict)  # (leaf label, port)
    worst_ratio: float = 0.0  # max over leaves of (busiest uplink / best possible)
    worst_leaf: str = ""
    worst_load: int = 0
    worst_best: int = 0


@dataclass
class SimResult:
    engine: str  # routing engine OpenSM reports it used (ftree, or its fallback)
    ca_summary: str  # OpenSM's "Fabric has N CAs, ... (K of them CNs)" line, if any
    forward: Direction  # class A -> class B (compute -> IO)
    backward: Direction  # class B -> class A (IO -> compute)
    classes: tuple[str, str]
    health: Health
    seconds: float = 0.0
    log_errors: list[str] = field(default_factory=list)


@dataclass
class Health:
    """All host-to-host routes, not just the two classes: are they there, do any turn back up
    after going down (a reverse hop), and is the channel dependency graph acyclic (no credit
    loop possible)."""

    pairs: int = 0
    unrouted: int = 0
    reverse: int = 0  # host pairs whose route goes down and then up again
    cdg_links: int = 0
    cdg_acyclic: bool = True
    cycle: tuple[str, ...] = ()


def host_classes(lay: Layout) -> tuple[str, str]:
    """(source class, IO class) of a fabric: compute/router on a compute fabric, else
    router/server."""
    kinds = {h.kind for h in lay.hosts}
    if "compute" in kinds:
        return "compute", "router"
    return "router", "server"


# ----------------------------------------------------------------------------- processes


def _env(sockname: str, sim_host: str, work: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        IBSIM_SOCKNAME=sockname,
        SIM_HOST=sim_host,
        OSM_CACHE_DIR=work,
        OSM_TMP_DIR=work,
        LD_PRELOAD=umad2sim(),
    )
    return env


class _Ibsim:
    """One ibsim process on a net file; a context manager that stops it by pid."""

    def __init__(self, netfile: str, work: str, sockname: str) -> None:
        self.log = os.path.join(work, "ibsim.log")
        env = dict(os.environ, IBSIM_SOCKNAME=sockname)
        env.pop("LD_PRELOAD", None)
        with open(self.log, "wb") as fh:
            self.proc = subprocess.Popen(
                ["ibsim", "-s", "-n", netfile],
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=work,
            )

    def wait_ready(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with open(self.log, encoding="utf-8", errors="replace") as fh:
                if "simulator ready" in fh.read():
                    return
            if self.proc.poll() is not None:
                raise SimError(f"ibsim exited with {self.proc.returncode}: {_tail(self.log)}")
            time.sleep(0.05)
        raise SimError(f"ibsim not ready after {timeout:.0f}s: {_tail(self.log)}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self) -> _Ibsim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _tail(path: str, n: int = 8) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = [ln.rstrip() for ln in fh if ln.strip() and "cannot parse" not in ln]
    except OSError:
        return ""
    return " | ".join(lines[-n:])


def _guid_file(path: str, guids: Sequence[int]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{guid_str(g)}\n" for g in sorted(guids)))


def _conf(work: str, settings: OpenSMSettings, files: dict[str, str] | None) -> str:
    """Write the guid files and opensm.conf into ``work``; return the conf path.

    ``files`` (lnetgen's own opensm.conf and guid files, ``@DIR@`` standing for the directory
    of the guid files) are used when given; otherwise ``settings`` as plain lines.
    """
    path = os.path.join(work, "opensm.conf")
    if files is not None:
        for name, text in sorted(files.items()):
            with open(os.path.join(work, name), "w", encoding="utf-8") as fh:
                fh.write(text.replace("@DIR@", work))
        return path
    for name, guids in (
        ("io_guid_file", settings.io_guids),
        ("cn_guid_file", settings.cn_guids),
        ("root_guid_file", settings.root_guids),
    ):
        if guids is not None:
            _guid_file(os.path.join(work, name), guids)
    lines = ["routing_engine ftree"]
    for name, guids in (
        ("io_guid_file", settings.io_guids),
        ("cn_guid_file", settings.cn_guids),
        ("root_guid_file", settings.root_guids),
    ):
        if guids is not None:
            lines.append(f"{name} {os.path.join(work, name)}")
    lines.append(f"max_reverse_hops {settings.max_reverse_hops}")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


_ENGINE_RE = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured")
_CA_RE = re.compile(r"Fabric has (\d+ CAs, \d+ CA ports \(\d+ of them CNs\), \d+ switches)")


def _run_opensm(
    env: dict[str, str], conf: str, work: str, timeout: float
) -> tuple[str, str, list[str]]:
    log = os.path.join(work, "opensm.log")
    cmd = ["opensm", "-o", "-R", "ftree", "-F", conf, "-f", log, "-e", "--dump_files_dir", work]
    try:
        proc = subprocess.run(
            cmd,
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SimError(f"opensm did not finish in {timeout:.0f}s: {_tail(log)}") from exc
    if proc.returncode != 0:
        raise SimError(f"opensm exited with {proc.returncode}: {_tail(log)}")
    with open(log, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    engines = _ENGINE_RE.findall(text)
    ca = _CA_RE.findall(text)
    errors = sorted({m.split("-> ", 1)[-1].strip() for m in text.splitlines() if "ERR " in m})
    return (engines[-1] if engines else "none"), (ca[-1] if ca else ""), errors


_FT_HEADER = re.compile(r"of switch .* guid (0x[0-9a-fA-F]+)")
_FT_ENTRY = re.compile(
    r"^(0x[0-9a-fA-F]+)\s+(\d+)\s*:\s*\((Channel Adapter|Switch)\s+portguid\s+"
    r"(0x[0-9a-fA-F]+)"
)


def parse_dump_fts(text: str) -> tuple[dict[int, dict[int, int]], dict[int, int]]:
    """``dump_fts`` output -> ({switch GUID: {LID: out port}}, {port GUID: LID})."""
    tables: dict[int, dict[int, int]] = {}
    lids: dict[int, int] = {}
    cur: dict[int, int] | None = None
    for line in text.splitlines():
        m = _FT_HEADER.search(line)
        if m and line.startswith("Unicast lids"):
            cur = tables.setdefault(int(m.group(1), 16), {})
            continue
        m = _FT_ENTRY.match(line.strip())
        if m and cur is not None:
            lid, port, pguid = int(m.group(1), 16), int(m.group(2)), int(m.group(4), 16)
            cur[lid] = port
            lids[pguid] = lid
    return tables, lids


def _dump_fts(env: dict[str, str], work: str, timeout: float) -> str:
    try:
        proc = subprocess.run(
            ["dump_fts"],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SimError(f"dump_fts did not finish in {timeout:.0f}s") from exc
    if proc.returncode != 0 or "Unicast lids" not in proc.stdout:
        raise SimError(f"dump_fts failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    with open(os.path.join(work, "dump_fts.txt"), "w", encoding="utf-8") as fh:
        fh.write(proc.stdout)
    return proc.stdout


# ----------------------------------------------------------------------------- counting


def count_routes(
    lay: Layout, tables: dict[int, dict[int, int]], lids: dict[int, int]
) -> tuple[Direction, Direction]:
    """Trace every class-A -> class-B and B -> A route through the forwarding tables."""
    src_kind, io_kind = host_classes(lay)
    links: dict[tuple[int, int], tuple[str, int]] = {}
    kind_of: dict[str, str] = {}
    guid_of: dict[str, int] = {}
    for n in lay.net.nodes:
        kind_of[n.id] = n.kind
        guid_of[n.id] = n.guid
        for lk in n.links:
            links[(n.guid, lk.port)] = (lk.peer, lk.peer_port)
    spine_index = {c.guid: k for k, c in enumerate(lay.spines)}
    leaf_label = {c.guid: c.label for c in lay.leaves}
    uplinks = {(c.guid, p) for c in lay.leaves for p in lay.uplinks.get((c.switch, c.leaf), ())}
    leaf_guid = {(c.switch, c.leaf): c.guid for c in lay.leaves}
    a_hosts = [h for h in lay.hosts if h.kind == src_kind]
    b_hosts = [h for h in lay.hosts if h.kind == io_kind]

    def direction(srcs: list[Host], dsts: list[Host]) -> Direction:
        d = Direction(spine=[0] * len(lay.spines))
        up: Counter[tuple[int, int]] = Counter()
        for dst in dsts:
            dlid = lids.get(dst.guid)
            dst_node = f"H-{dst.guid - 1:016x}"
            for src in srcs:
                if src.name == dst.name:
                    continue
                d.routes += 1
                if dlid is None:
                    d.unrouted += 1
                    continue
                sw = leaf_guid[(src.attach.switch, src.attach.leaf)]
                hops: list[tuple[int, int]] = []
                ok = False
                for _ in range(16):
                    out = tables.get(sw, {}).get(dlid)
                    if out is None or (sw, out) not in links:
                        break
                    hops.append((sw, out))
                    peer, _pp = links[(sw, out)]
                    if kind_of.get(peer) != "switch":
                        ok = peer == dst_node
                        break
                    sw = guid_of[peer]
                if not ok:
                    d.unrouted += 1
                    continue
                seen_spines = set()
                for sw_, out in hops:
                    if sw_ in spine_index and sw_ not in seen_spines:
                        seen_spines.add(sw_)
                        d.spine[spine_index[sw_]] += 1
                    if (sw_, out) in uplinks:
                        up[(sw_, out)] += 1
        d.uplink = {(leaf_label[g], p): n for (g, p), n in sorted(up.items())}
        # worst uplink against the best possible on each leaf
        by_leaf_src: Counter[int] = Counter(
            leaf_guid[(h.attach.switch, h.attach.leaf)] for h in srcs
        )
        by_leaf_dst: Counter[int] = Counter(
            leaf_guid[(h.attach.switch, h.attach.leaf)] for h in dsts
        )
        for c in lay.leaves:
            n_up = len(lay.uplinks.get((c.switch, c.leaf), ()))
            if not n_up or not by_leaf_src[c.guid]:
                continue
            elsewhere = len(dsts) - by_leaf_dst[c.guid]
            best = by_leaf_src[c.guid] * math.ceil(elsewhere / n_up)
            load = max((n for (g, _p), n in up.items() if g == c.guid), default=0)
            if best and load / best > d.worst_ratio:
                d.worst_ratio, d.worst_leaf = load / best, c.label
                d.worst_load, d.worst_best = load, best
        return d

    return direction(a_hosts, b_hosts), direction(b_hosts, a_hosts)


def route_health(lay: Layout, tables: dict[int, dict[int, int]], lids: dict[int, int]) -> Health:
    """Trace every (leaf, destination host) path; see :class:`Health`.

    Hosts on one leaf share every switch-to-switch link of their paths, so one trace per leaf
    and destination covers all host pairs; a host's own cable cannot close a dependency cycle
    (nothing depends on it before it), so the channel dependency graph is built over the
    switch-to-switch links only.
    """
    links: dict[tuple[int, int], tuple[str, int]] = {}
    kind_of: dict[str, str] = {}
    guid_of: dict[str, int] = {}
    for n in lay.net.nodes:
        kind_of[n.id] = n.kind
        guid_of[n.id] = n.guid
        for lk in n.links:
            links[(n.guid, lk.port)] = (lk.peer, lk.peer_port)
    spines = {c.guid for c in lay.spines}
    up = {(c.guid, p) for c in lay.leaves for p in lay.uplinks.get((c.switch, c.leaf), ())}
    label = {c.guid: c.label for c in (*lay.leaves, *lay.spines)}
    on_leaf: Counter[int] = Counter()
    leaf_guid = {(c.switch, c.leaf): c.guid for c in lay.leaves}
    for h in lay.hosts:
        on_leaf[leaf_guid[(h.attach.switch, h.attach.leaf)]] += 1
    cdg = nx.DiGraph()
    out = Health()
    for dst in lay.hosts:
        dlid = lids.get(dst.guid)
        dst_node = f"H-{dst.guid - 1:016x}"
        dst_leaf = leaf_guid[(dst.attach.switch, dst.attach.leaf)]
        for leaf in sorted(on_leaf):
            n_src = on_leaf[leaf] - (1 if leaf == dst_leaf else 0)
            if n_src <= 0:
                continue
            out.pairs += n_src
            sw, hops, ok = leaf, [], False
            for _ in range(16):
                port = tables.get(sw, {}).get(dlid) if dlid is not None else None
                if port is None or (sw, port) not in links:
                    break
                peer, _pp = links[(sw, port)]
                if kind_of.get(peer) != "switch":
                    ok = peer == dst_node
                    break
                hops.append((sw, port))
                sw = guid_of[peer]
            if not ok:
                out.unrouted += n_src
                continue
            went_down = False
            for k, hop in enumerate(hops):
                if hop[0] in spines:
                    went_down = True
                elif hop in up and went_down:
                    out.reverse += n_src
                    break
                del k
            cdg.add_edges_from(itertools.pairwise(hops))
    out.cdg_links = cdg.number_of_nodes()
    try:
        cycle = nx.find_cycle(cdg)
    except nx.NetworkXNoCycle:
        return out
    out.cdg_acyclic = False
    out.cycle = tuple(f"{label.get(a[0], hex(a[0]))}:{a[1]}" for a, _b in cycle)
    return out


# ----------------------------------------------------------------------------- entry point


def simulate(
    lay: Layout,
    settings: OpenSMSettings | None = None,
    files: dict[str, str] | None = None,
    timeout: float = 300.0,
    keep: str | None = None,
) -> SimResult:
    """Simulate ``lay``, run OpenSM ftree once, trace and count the routes.

    OpenSM gets either ``files`` (file name -> content: ``opensm.conf`` and guid files, as
    :func:`lnetgen.emit.opensm.fabric_files` makes them with ``directory="@DIR@"``) or plain
    ``settings`` (default: ftree with no guid files).  ``keep``: a directory to leave the net
    file, logs and forwarding tables in.  Raises ``SimError`` when a program fails.
    """
    missing = missing_tools()
    if missing:
        raise SimError(
            f"not installed: {', '.join(missing)} (Debian packages: {' '.join(PACKAGES)})"
        )
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lnetgen-ibsim-") as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        netfile = os.path.join(work, "fabric.net")
        with open(netfile, "w", encoding="utf-8") as fh:
            fh.write(render_net(lay.net, [f"fabric {lay.fabric.name} of site {lay.site}"]))
        conf = _conf(work, settings or OpenSMSettings(), files)
        sockname = f"lnetgen-{os.getpid()}-{os.path.basename(tmp)}"
        src_kind, io_kind = host_classes(lay)
        first = next((h for h in lay.hosts if h.kind == src_kind), lay.hosts[0])
        env = _env(sockname, f"H-{first.guid - 1:016x}", work)
        with _Ibsim(netfile, work, sockname) as sim:
            sim.wait_ready(60)
            engine, ca, errors = _run_opensm(env, conf, work, timeout)
            text = _dump_fts(env, work, timeout)
        tables, lids = parse_dump_fts(text)
        fwd, back = count_routes(lay, tables, lids)
        health = route_health(lay, tables, lids)
    return SimResult(
        engine,
        ca,
        fwd,
        back,
        (src_kind, io_kind),
        health,
        round(time.monotonic() - start, 1),
        errors,
    )


@dataclass(frozen=True)
class Scenario:
    """One configuration ``check`` measures: cabling (inventory or port plan) and OpenSM
    settings (plain ftree, or lnetgen's files with a given ``max_reverse_hops``)."""

    key: str
    title: str
    port_plan: bool
    files: bool
    max_reverse_hops: int = MAX_REVERSE_HOPS


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("as-cabled", "inventory cabling, ftree without guid files", False, False),
    Scenario(
        "files-h0", "inventory cabling, lnetgen guid files, max_reverse_hops 0", False, True, 0
    ),
    Scenario("files", "inventory cabling, lnetgen opensm.conf", False, True),
    Scenario("port-plan", "staggered port plan, ftree without guid files", True, False),
    Scenario("recommended", "staggered port plan + lnetgen opensm.conf", True, True),
)


@dataclass
class CheckRow:
    scenario: Scenario
    switch: str  # the switch (connected part of the fabric) simulated
    result: SimResult


def check(
    site: Site,
    fabric: str | None = None,
    scenarios: Sequence[str] | None = None,
    keep: str | None = None,
) -> list[CheckRow]:
    """Run :data:`SCENARIOS` (or those named) on one fabric (default: the compute fabric, else
    the storage fabric).  The port-plan scenarios apply only to a compute fabric.  Each switch
    of the fabric is simulated on its own: the inventory does not cable switches together.
    Raises ``SimError`` when a program is missing or fails."""
    fab = fabric_of(site, fabric)
    hosts = fabric_hosts(site, fab)
    moves = plan_ports(site, hosts) if fab.name == site.client_fabric else []
    rows: list[CheckRow] = []
    for sc in SCENARIOS:
        if scenarios is not None and sc.key not in scenarios:
            continue
        if sc.port_plan and fab.name != site.client_fabric:
            continue
        hs = apply_moves(hosts, moves) if sc.port_plan else hosts
        files = (
            fabric_files(
                site, fab, f"lnetgen fabric check ({sc.key})", "@DIR@", sc.max_reverse_hops
            )
            if sc.files
            else None
        )
        for sw in fab.switches:
            part = [h for h in hs if h.attach.switch == sw.name]
            if not part:
                continue
            lay = layout(site, Fabric(fab.name, fab.role, (sw,)), part)
            sub = os.path.join(keep, sc.key, sw.name) if keep else None
            rows.append(CheckRow(sc, sw.name, simulate(lay, files=files, keep=sub)))
    return rows


def spine_summary(counts: Sequence[int]) -> str:
    """``18 spines: 0 x16, 432 x1, 208 x1`` style: each distinct count and how often."""
    c = Counter(counts)
    parts = [f"{v}x{n}" for v, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]
    return f"min {min(counts, default=0)} max {max(counts, default=0)} ({', '.join(parts)})"
