"""Run the real OpenSM on a simulated copy of a fabric and count where its routes go: the
programs and one simulation (:func:`simulate`); :mod:`lnetgen.fabric.advise` runs the candidate
settings ``fabric check`` compares.

``ibsim`` (ibsim-utils) simulates the fabric from the net file that :mod:`lnetgen.fabric`
writes; ``opensm -o`` (once mode) configures it through ``libumad2sim.so`` (preloaded, so no
kernel or hardware is involved); ``dump_fts`` (infiniband-diags) reads every switch's unicast
forwarding table back, which :mod:`lnetgen.fabric.trace` follows and counts.

Each simulator gets a private ``IBSIM_SOCKNAME`` (abstract unix sockets, nothing on disk) and
is stopped by its pid.  ``missing_tools()`` says what is not installed; nothing here installs
anything.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from lnetgen.fabric.cabling import Layout
from lnetgen.fabric.graph import guid_str
from lnetgen.fabric.ibnetdiscover import render_net
from lnetgen.fabric.trace import (
    Direction,
    Health,
    count_routes,
    host_classes,
    parse_dump_fts,
    route_health,
)

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
#: Switch nodes one ibsim net may hold (ibsim's MAXNETSWITCHES): a larger one made ibsim panic
#: ("new_switch: no more switches (max 256)") after the net file was written.
MAX_IBSIM_SWITCHES = 256


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


@dataclass
class SimResult:
    engine: str  # routing engine OpenSM reports it used (ftree, or its fallback)
    fallback: str  # why OpenSM fell back from the engine asked for ('' when it did not)
    ca_summary: str  # OpenSM's "Fabric has N CAs, ... (K of them CNs)" line, if any
    forward: Direction  # class A -> class B (compute -> IO)
    backward: Direction  # class B -> class A (IO -> compute)
    classes: tuple[str, str]
    health: Health
    seconds: float = 0.0
    log_errors: list[str] = field(default_factory=list)
    # OpenSM's forwarding tables ({switch GUID: {LID: out port}}) and the hosts' LIDs, to
    # follow any route again (lnetgen.fabric.trace.host_paths)
    tables: dict[int, dict[int, int]] = field(default_factory=dict, repr=False)
    lids: dict[int, int] = field(default_factory=dict, repr=False)


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
        fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
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


def _run(
    cmd: list[str], env: dict[str, str], work: str, timeout: float, log: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run a client of the simulator to its end, output captured; ``SimError`` when it takes
    longer than ``timeout``, with the end of ``log`` when the program writes one."""
    try:
        return subprocess.run(
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
        tail = f": {_tail(log)}" if log else ""
        raise SimError(f"{cmd[0]} did not finish in {timeout:.0f}s{tail}") from exc


def _create(path: str, data: str | bytes) -> None:
    """Write a new file: never one that is there already, never through a symbolic link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def _conf_files(
    where: str, settings: OpenSMSettings, files: dict[str, str] | None
) -> dict[str, str]:
    """The guid files and opensm.conf (file name -> text), naming the guid files in ``where``.

    ``files`` (lnetgen's own opensm.conf and guid files, ``@DIR@`` standing for the directory
    of the guid files) are used when given; otherwise ``settings`` as plain lines.
    """
    if files is not None:
        return {name: text.replace("@DIR@", where) for name, text in sorted(files.items())}
    out: dict[str, str] = {}
    lines = ["routing_engine ftree"]
    for name, guids in (
        ("io_guid_file", settings.io_guids),
        ("cn_guid_file", settings.cn_guids),
        ("root_guid_file", settings.root_guids),
    ):
        if guids is not None:
            out[name] = "".join(f"{guid_str(g)}\n" for g in sorted(guids))
            lines.append(f"{name} {os.path.join(where, name)}")
    lines.append(f"max_reverse_hops {settings.max_reverse_hops}")
    out["opensm.conf"] = "\n".join(lines) + "\n"
    return out


_ENGINE_RE = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured")
#: OpenSM's reason for leaving an engine: "ucast_mgr_route: ftree: cannot build lid matrices"
#: (osm_ucast_mgr.c), after the engine's own ERR lines.
_FAIL_RE = re.compile(r"ucast_mgr_route: (\S+): (cannot .*)$")
_CA_RE = re.compile(r"Fabric has (\d+ CAs, \d+ CA ports \(\d+ of them CNs\), \d+ switches)")


def _run_opensm(
    env: dict[str, str], conf: str, work: str, timeout: float
) -> tuple[str, str, str, list[str]]:
    """OpenSM once over the simulator: (routing engine used, why it fell back from ftree or '',
    CA summary, ERR lines)."""
    log = os.path.join(work, "opensm.log")
    cmd = ["opensm", "-o", "-R", "ftree", "-F", conf, "-f", log, "-e", "--dump_files_dir", work]
    proc = _run(cmd, env, work, timeout, log)
    if proc.returncode != 0:
        raise SimError(f"opensm exited with {proc.returncode}: {_tail(log)}")
    with open(log, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    engines = _ENGINE_RE.findall(text)
    ca = _CA_RE.findall(text)
    lines = text.splitlines()
    errors = sorted({m.split("-> ", 1)[-1].strip() for m in lines if "ERR " in m})
    engine = engines[-1] if engines else "none"
    fallback = ""
    if engine != "ftree":
        fails = [f"{m[0]}: {m[1]}" for ln in lines for m in _FAIL_RE.findall(ln)]
        first_err = next((e for e in errors if "ftree" in e.lower() or "AB" in e), "")
        fallback = "; ".join(x for x in (fails[-1] if fails else "", first_err) if x)
        fallback = fallback or f"OpenSM configured {engine} instead of ftree"
    return engine, fallback, (ca[-1] if ca else ""), errors


def _dump_fts(env: dict[str, str], work: str, timeout: float) -> str:
    """Every switch's forwarding table, also kept in ``work``."""
    proc = _run(["dump_fts"], env, work, timeout)
    if proc.returncode != 0 or "Unicast lids" not in proc.stdout:
        raise SimError(f"dump_fts failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    _create(os.path.join(work, "dump_fts.txt"), proc.stdout)
    return proc.stdout


# ----------------------------------------------------------------------------- one simulation


def simulate(
    lay: Layout,
    settings: OpenSMSettings | None = None,
    files: dict[str, str] | None = None,
    timeout: float = 300.0,
    keep: str | None = None,
    keep_as: str | None = None,
    pairs: frozenset[tuple[str, str]] | None = None,
) -> SimResult:
    """Simulate ``lay``, run OpenSM ftree once, trace and count the routes (every route
    between the two host classes, or those of ``pairs``: :func:`lnetgen.fabric.trace.
    count_routes`).

    OpenSM gets either ``files`` (file name -> content: ``opensm.conf`` and guid files, as
    :func:`lnetgen.emit.opensm.fabric_files` makes them with ``directory="@DIR@"``) or plain
    ``settings`` (default: ftree with no guid files).  ``keep``: a directory to leave the net
    file, logs and forwarding tables in; it must not exist yet (its parent is created), for
    ibsim and OpenSM run in it and write what they like there: ``fabric check --keep`` gives
    a directory of its private staging tree (:mod:`lnetgen.fabric.keep`), never the user's.
    ``keep_as``: where the kept files will end up, named in the kept ``opensm.conf``.
    Raises ``SimError`` when a program fails.
    """
    missing = missing_tools()
    if missing:
        raise SimError(
            f"not installed: {', '.join(missing)} (Debian packages: {' '.join(PACKAGES)})"
        )
    chips = len(lay.leaves) + len(lay.spines)
    if chips > MAX_IBSIM_SWITCHES:
        names = sorted({c.switch for c in (*lay.leaves, *lay.spines)})
        raise SimError(
            f"{', '.join(names)} of fabric {lay.fabric.name}: {len(lay.leaves)} leaf and "
            f"{len(lay.spines)} spine chip(s), {chips} switches; ibsim simulates at most "
            f"{MAX_IBSIM_SWITCHES} (check the spines and leaves in the inventory)"
        )
    start = time.monotonic()
    settings = settings or OpenSMSettings()
    with tempfile.TemporaryDirectory(prefix="lnetgen-ibsim-") as tmp:
        work = keep or tmp
        if keep:
            try:
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                os.mkdir(keep, 0o755)  # a new directory: nothing in it is someone else's
            except OSError as exc:
                raise SimError(f"cannot create {keep}: {exc.strerror or exc}") from None
        netfile = os.path.join(work, "fabric.net")
        header = [f"fabric {lay.fabric.name} of site {lay.site}", lay.speeds.note]
        _create(netfile, render_net(lay.net, header, lay.speeds))
        for name, text in _conf_files(work, settings, files).items():
            _create(os.path.join(work, name), text)
        conf = os.path.join(work, "opensm.conf")
        sockname = f"lnetgen-{os.getpid()}-{os.path.basename(tmp)}"
        src_kind, io_kind = host_classes(lay)
        first = next((h for h in lay.hosts if h.kind == src_kind), lay.hosts[0])
        env = _env(sockname, first.node_id, work)
        try:
            with _Ibsim(netfile, work, sockname) as sim:
                sim.wait_ready(60)
                engine, fallback, ca, errors = _run_opensm(env, conf, work, timeout)
                text = _dump_fts(env, work, timeout)
        finally:
            if keep and keep_as:  # the kept opensm.conf names the guid files where they are kept
                os.unlink(conf)
                _create(conf, _conf_files(keep_as, settings, files)["opensm.conf"])
        tables, lids = parse_dump_fts(text)
        fwd, back = count_routes(lay, tables, lids, pairs)
        health = route_health(lay, tables, lids)
    return SimResult(
        engine,
        fallback,
        ca,
        fwd,
        back,
        (src_kind, io_kind),
        health,
        round(time.monotonic() - start, 1),
        errors,
        tables,
        lids,
    )
