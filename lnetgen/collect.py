"""Gathering live LNet state: ``lnetctl export --backup``, ``lnetctl net show`` and the
modprobe ``lnet`` options of every host of a node set, in parallel through ClusterShell's task
API, into one directory that ``lnetgen diff --live`` reads.

``collect`` runs three commands on every host (ClusterShell's ssh worker, its fan-out and, when
``/etc/clustershell/topology.conf`` names gateways, its tree), and returns one dump per host and
command (in its spool, below) plus the hosts that failed (non-zero exit or no output of the
export, too much output, a time-out).  ``collected_files`` turns that into the files of the
output tree, one at a time: ``<host>.yaml`` (the export), ``<host>.conf`` (the modprobe lines,
when the host has any), ``<host>.net.yaml`` (net show), ``failed.txt`` and, last, a
``manifest.json`` that lists the dumps by host -- what lets a later ``collect`` replace the
directory (``lnetgen.write``: it deletes only what it wrote).  ``diff --live`` reads the
directory as dumps, all of a host's merged (``lnetgen.live.collected``).

**NIDs.**  ``export --backup`` prints no NID (``lustre_lnet_show_net`` and the kernel's netlink
dump leave ``nid:`` out when backing up: LNet takes a NID from its interface), so a moved
server or router address would compare equal.  ``lnetctl net show`` (without ``-v``: no
statistics, a few hundred bytes per NI) prints each NI's NID and status; the full ``lnetctl
export`` would too, but with per-peer statistics, megabytes on a server with many clients.  A
host whose net show fails is still collected, without its NIDs: why goes to the manifest's
``collected.no_nids`` and stderr, and ``diff`` says its NIDs are not compared.

With ``local=True`` the commands run on this machine through ClusterShell's exec worker, ``%h``
standing for the host name: for tests, and for sites that reach ``lnetctl`` through a wrapper.
Any other ``%`` of a command is run as written, as through ssh (``lnetgen.collect_workers``:
ClusterShell's exec worker took it for a placeholder and refused the run).

**Bounded output.**  Each command's output on a host (standard output and error together) is
read in blocks as it comes, never held as lines, and kept up to ``MAX_OUTPUT_BYTES``, 16 MiB;
one byte more and that host's command is killed, what it printed is dropped and the host fails
("printed more than 16 MiB").  The other hosts go on.  Why 16 MiB: a real export is far smaller
(a big FGR client's is ~200 KB, one of 20,000 routes 2.3 MB, a server's peer list of some
30,000 clients a few MB), so the limit only ever stops a command that is not ``lnetctl
export`` (``yes``, a wrapper gone wrong); it stays under the 64 MiB that ``diff --live`` reads
of one dump; and when every host of a fan-out prints without end at once it holds at most
fan-out x 16 MiB (1 GiB at the default 64), where 64 MiB would allow 4 GiB.  ClusterShell's own
reader keeps everything: each line as a node of its message tree (``yes`` grew to 2.5 GB in its
30 s), and a line without a newline whole in its read buffer, re-split on every read (``cat
/dev/zero``).  Through a gateway tree the lines come from ClusterShell's gateways: they are
counted the same way, but a host past the limit is only stopped by its time-out.

**Bounded memory.**  Only running commands hold output in memory.  When a host's command ends,
what it printed goes to a spool file (one per command, appended host after host, in ``TMPDIR``
or ``spool_dir``) and leaves memory; of the host stay only its place in the file and the first
line of its error output.  ``collected_files`` reads the dumps back one at a time as
``write_tree`` takes them, hashing each for the manifest it yields last.  So a collect holds at
most fan-out x 16 MiB of output (the fan-out counts both commands' hosts together), then one
dump and its text, whatever the number of hosts: 2,000 hosts printing 1 MB each peaked at 147
MiB resident, where keeping every dump and decoding them all at once took 5.7 GiB.  The result owns
the spool files: its caller closes them (``with collect(...) as result``), ``collect`` itself
when it fails or is interrupted.  They have no name (``tempfile.TemporaryFile``): the system
frees them when they are closed or the process ends, however it ends (``kill -9`` too) --
nothing to remove, no path another user could open.  A ``TMPDIR`` on tmpfs keeps the spool in
memory (swappable).  Through a gateway tree a host that times out keeps its output (at most the
limit) to the end of the run: ClusterShell tells no handler when one host of a tree times out.

**No orphans.**  Each command starts in a process group of its own.  When it is stopped early
(its time-out, the output limit) or the run is interrupted (Ctrl-C, or SIGTERM or SIGHUP, which
the CLI turns into an exception), the whole group is killed.  ClusterShell kills only the process it
started (``ssh``, or ``/bin/sh -c COMMAND`` with ``local``), by its process id; the run's
exception had already made it do so on the way out of ``task.run()``, so a later
``task.abort(kill=True)`` found no client left to stop, and what that process had started (the
command, ``ssh``, a wrapper's children) went on, re-parented to init.  A child in its own
group gets no Ctrl-C from the terminal either; it is killed with its group like the others.  So
a command cannot ask for a password on the terminal (it would stop): use keys, as ssh's batch
mode does.  Standard input is closed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lnetgen import __version__, nodes
from lnetgen.collect_workers import kill_running, schedule
from lnetgen.diagnostics import Diagnostic, UsageError, usage

#: What runs on every host: the whole LNet configuration, as `lnetctl import` reads it back.
EXPORT_COMMAND = "lnetctl export --backup"
#: The modprobe configuration of LNet (no file is no error).
MODPROBE_COMMAND = "cat /etc/modprobe.d/*lnet* 2>/dev/null; true"
#: The NIDs the node runs, which ``export --backup`` leaves out (the module's docstring).
NET_COMMAND = "lnetctl net show"
#: Most hosts one collect may name.
MAX_HOSTS = 100_000
#: The first characters of a host's error output kept as the reason it failed.
REASON_CHARS = 200
#: Most bytes one command may print on one host, standard output and error together (see the
#: module's docstring for why 16 MiB); past it the command is killed and the host fails.
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: The first bytes of a host's error output kept (its first line is the reason it failed).
ERROR_BYTES_KEPT = 4096


class _SpoolError(Exception):
    """A spool file could not be made or written (its ``OSError``'s text)."""


class _Spool(Mapping[str, bytes]):
    """One command's output, host after host, in a temporary file without a name (the system
    frees it when it is closed or this process ends); as a mapping, that of the hosts named by
    ``keep``, read from the file at each look-up (``in`` reads nothing)."""

    def __init__(self, directory: str) -> None:
        try:
            self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 (see close)
        except OSError as exc:
            raise _SpoolError(exc.strerror or str(exc)) from None
        self._end = 0
        self._where: dict[str, tuple[int, int]] = {}  # host -> (offset, size)
        self.error = ""  # why a write failed: never raised inside ClusterShell's loop

    def put(self, host: str, blocks: list[bytes]) -> None:
        if host in self._where:  # output after the end of its command: kept after the rest
            blocks = [self[host], *blocks]
        start = self._end
        try:
            self._file.seek(start)
            for block in blocks:
                self._file.write(block)
                self._end += len(block)
            self._file.flush()
        except OSError as exc:
            self.error = self.error or exc.strerror or str(exc)
        self._where[host] = (start, self._end - start)

    def keep(self, hosts: Iterable[str]) -> None:
        """Forget every host but ``hosts`` (in this order; one that printed nothing: b"")."""
        self._where = {h: self._where.get(h, (0, 0)) for h in hosts}

    def __getitem__(self, host: str) -> bytes:
        start, size = self._where[host]
        self._file.seek(start)  # ValueError once closed
        if len(data := self._file.read(size)) != size:
            raise OSError(errno.EIO, "the spool file is shorter than what was written to it")
        return data

    def __contains__(self, host: object) -> bool:
        return host in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def close(self) -> None:
        """Free the file.  A write that failed may have left bytes in the file's buffer, which
        closing tries to write again; that second failure is already in ``error`` (or moot: the
        output is being dropped), and the descriptor is closed either way."""
        try:
            self._file.close()
        except OSError as exc:
            self.error = self.error or exc.strerror or str(exc)


@dataclass
class Collected:
    """What came back: ``dumps[host]`` (export output), ``modprobe[host]``, ``nets[host]``
    (``lnetctl net show``), and ``failed[host]``
    (why: exit status and the first line of its error output, "timed out", or too much
    output).  From ``collect``, ``dumps`` and ``modprobe`` read a host's output from the spool
    files at each look-up, until ``close`` (or the end of a ``with`` block); built by hand,
    they can be dicts."""

    hosts: Sequence[str]
    dumps: Mapping[str, bytes] = field(default_factory=dict)
    modprobe: Mapping[str, bytes] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    #: ``lnetctl net show`` of the collected hosts whose command succeeded, and why it did not
    #: for the others (they are collected, without their NIDs)
    nets: Mapping[str, bytes] = field(default_factory=dict)
    no_nids: dict[str, str] = field(default_factory=dict)
    timed_out: set[str] = field(default_factory=set)
    spools: tuple[_Spool, ...] = field(default=(), repr=False, compare=False)

    def close(self) -> None:
        """Close the spool files: the outputs they hold are gone."""
        for spool in self.spools:
            spool.close()

    def __enter__(self) -> Collected:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_hosts(nodeset: str) -> list[str]:
    """The hosts of ``nodeset``; raises ``UsageError`` for a bad node set or host name."""
    if nodes.count(nodeset) > MAX_HOSTS:
        raise UsageError([usage("NODESET", f"names more than {MAX_HOSTS:,} hosts")])
    try:
        hosts = nodes.expand(nodeset)
    except nodes.NodeSyntaxError as exc:
        raise UsageError([usage("NODESET", f"{nodeset!r} is not a node set: {exc}")]) from None
    bad = [h for h in hosts if nodes.HOSTNAME_RE.match(h) is None]
    if bad or not hosts:
        what = f"{bad[0]!r} is not a host name" if bad else "names no host"
        raise UsageError([usage("NODESET", what)])
    return hosts


#: ``descr: "..."`` of lnetctl's error YAML (``show: - net: errno: -100 descr: ...``)
_DESCR = re.compile(r"""^\s*descr:\s*(?P<q>["']?)(?P<text>.*?)(?P=q)\s*$""")
#: A line of YAML structure only (``show:``, ``- net:``, ``errno: -100``, ``seq_no: 0``)
_SCAFFOLD = re.compile(r"^\s*(?:-\s*)?(?:[\w ]+:|errno:\s*-?\d+|seq_no:\s*\d+)\s*$")
#: ssh's notices on a host's first contact, printed before whatever failed
_SSH_NOTICE = re.compile(r"^(?:Warning: Permanently added |\*\*)")


def _first_line(err: bytes) -> str | None:
    """The line of an error output that says why the command failed, cut to
    ``REASON_CHARS``; None when there is none.

    lnetctl prints its errors as YAML (``show:`` / ``- net:`` / ``errno: -100`` / ``descr:
    "cannot get networks: Network is down"``): there the reason is each ``descr``, led by the
    section it is about (``net: cannot get networks: Network is down``; several joined by
    ``; ``).  Otherwise it is the first line that is neither YAML structure nor one of ssh's
    first-contact notices (``Warning: Permanently added ...``), else the first line."""
    lines = [ln for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
    if not lines:
        return None
    found: list[str] = []
    entity = ""
    for ln in lines:
        if (m := _DESCR.match(ln)) is not None:
            found.append(f"{entity}: {m['text']}" if entity else m["text"])
        elif (key := ln.strip().removeprefix("-").strip()).endswith(":") and key != "show:":
            entity = key[:-1].strip()
    if not found:
        found = [
            next(
                (ln for ln in lines if not _SCAFFOLD.match(ln) and not _SSH_NOTICE.match(ln)),
                lines[0],
            ).strip()
        ]
    return "; ".join(found)[:REASON_CHARS]


def _reason(rc: int, line: str | None) -> str:
    """Why a command failed, printable: its exit status and the line ``_first_line`` chose
    (characters that cannot be printed escaped)."""
    text = f"exit status {rc}" + (f": {line}" if line is not None else "")
    return text if text.isprintable() else ascii(text)[1:-1]


def _too_much(what: str, limit: int) -> str:
    size = f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit:,} bytes"
    return f"the {what} command printed more than {size} (the limit): stopped"


@dataclass
class _Output:
    """One command's output, per host: while it runs, standard output in blocks and the first
    ``ERROR_BYTES_KEPT`` bytes of its error output, both counted against ``limit``; once it
    ended (``finish``), standard output in ``spool`` and the first line of the error output."""

    limit: int
    spool: _Spool
    out: dict[str, list[bytes]] = field(default_factory=dict)
    err: dict[str, bytes] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    over: set[str] = field(default_factory=set)
    printed: set[str] = field(default_factory=set)  # standard output not blank
    cut: set[str] = field(default_factory=set)  # closed by the time-out, whatever its status
    first_err: dict[str, str] = field(default_factory=dict)

    def add(self, host: str, stderr: bool, data: bytes) -> bool:
        """Keep ``data``; False once ``host`` printed more than the limit (then nothing of it
        is kept, and the caller stops its command)."""
        if host in self.over:
            return False
        size = self.size.get(host, 0) + len(data)
        if size > self.limit:
            self.over.add(host)
            self.out.pop(host, None)
            self.err.pop(host, None)
            self.printed.discard(host)
            return False
        self.size[host] = size
        if not stderr:
            self.out.setdefault(host, []).append(data)
            if data and not data.isspace():  # the whitespace of ``bytes.strip``
                self.printed.add(host)
        elif len(kept := self.err.get(host, b"")) < ERROR_BYTES_KEPT:
            self.err[host] = kept + data[: ERROR_BYTES_KEPT - len(kept)]
        return True

    def finish(self, host: str, keep: bool) -> None:
        """``host``'s command ended: its output leaves memory, to the spool (``keep``) or
        dropped (killed: its time-out, the limit, an interruption)."""
        blocks, err, _ = self.out.pop(host, None), self.err.pop(host, b""), self.size.pop(host, 0)
        if not keep:
            self.printed.discard(host)
            return
        if blocks:
            self.spool.put(host, blocks)
        if (line := _first_line(err)) is not None:
            self.first_err[host] = line


def collect(
    hosts: list[str],
    *,
    fanout: int = 64,
    timeout: float = 30.0,
    local: bool = False,
    export_command: str = EXPORT_COMMAND,
    modprobe_command: str = MODPROBE_COMMAND,
    net_command: str = NET_COMMAND,
    max_output: int | None = None,
    spool_dir: str | None = None,
) -> Collected:
    """Run the three commands on every host in parallel (at most ``fanout`` at a time, each
    within ``timeout`` seconds and ``max_output`` bytes, by default ``MAX_OUTPUT_BYTES``) and
    sort the results; nothing is written but the spool files (in ``spool_dir``, by default the
    system's temporary directory), which the result owns: close it when done (``with``).
    Interrupted (``KeyboardInterrupt``, ``SystemExit``) or failing, it kills every command it
    started and closes the spool files before the exception goes on; a spool file that cannot
    be made or written is a ``UsageError``."""
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet
    from ClusterShell.Task import task_self

    limit = MAX_OUTPUT_BYTES if max_output is None else max_output
    where = spool_dir if spool_dir is not None else tempfile.gettempdir()
    task = task_self()
    trees = ("stdout_msgtree", "stderr_msgtree")  # lines are kept here, not by ClusterShell
    saved = task.info("fanout"), [task.default(k) for k in trees]
    ns = NodeSet.fromlist(hosts, resolver=RESOLVER_NOGROUP)
    procs: dict[int, Any] = {}
    spools: list[_Spool] = []
    try:
        spools += (_Spool(where), _Spool(where), _Spool(where))
        outputs = {
            what: _Output(limit, spool)
            for what, spool in zip(("export", "modprobe", "net"), spools, strict=True)
        }
        task.set_info("fanout", fanout)
        for k in trees:
            task.set_default(k, False)
        workers = {
            what: schedule(task, ns, cmd, timeout, outputs[what], procs, local=local)
            for what, cmd in (
                ("export", export_command),
                ("modprobe", modprobe_command),
                ("net", net_command),
            )
        }
        try:
            task.run()
        except BaseException:
            kill_running(procs)
            raise
        if errors := [spool.error for spool in spools if spool.error]:
            raise _SpoolError(errors[0])
        return _results(hosts, workers, outputs, timeout, limit)
    except BaseException as exc:
        for spool in spools:
            spool.close()
        if isinstance(exc, _SpoolError):
            msg = f"cannot keep the collected output here: {exc}; TMPDIR names another place"
            raise UsageError([Diagnostic(where, 0, 0, "error", "E-OUTPUT", "$", msg)]) from None
        raise
    finally:
        task.set_info("fanout", saved[0])
        for k, v in zip(trees, saved[1], strict=True):
            task.set_default(k, v)


def _results(
    hosts: list[str],
    workers: dict[str, Any],
    outputs: dict[str, _Output],
    timeout: float,
    limit: int,
) -> Collected:
    out = Collected(hosts, spools=tuple(o.spool for o in outputs.values()))
    rcs: dict[str, int] = {}
    for rc, keys in workers["export"].iter_retcodes():
        rcs.update((str(n), rc) for n in keys)
    net_rcs: dict[str, int] = {}
    for rc, keys in workers["net"].iter_retcodes():
        net_rcs.update((str(n), rc) for n in keys)
    for worker in workers.values():
        out.timed_out.update(str(n) for n in worker.iter_keys_timeout())
    export, modprobe, net = outputs["export"], outputs["modprobe"], outputs["net"]
    out.timed_out |= export.cut | modprobe.cut | net.cut
    collected: list[str] = []
    for h in hosts:
        if h in export.over:
            out.failed[h] = _too_much("export", limit)
        elif h in out.timed_out:
            out.failed[h] = f"timed out after {timeout:g} s"
        elif rcs.get(h, 0) != 0:
            out.failed[h] = _reason(rcs[h], export.first_err.get(h))
        elif h not in export.printed:
            out.failed[h] = "no output from the export command"
        elif h in modprobe.over:
            out.failed[h] = _too_much("modprobe", limit)
        elif h in net.over:
            out.failed[h] = _too_much("net show", limit)
        else:
            collected.append(h)
            if net_rcs.get(h, 0) != 0:
                out.no_nids[h] = _reason(net_rcs[h], net.first_err.get(h))
            elif h not in net.printed:
                out.no_nids[h] = "no output from the net show command"
    out.dumps, out.modprobe, out.nets = export.spool, modprobe.spool, net.spool
    export.spool.keep(collected)
    modprobe.spool.keep(collected)
    net.spool.keep(h for h in collected if h not in out.no_nids)
    return out


def _text(data: bytes) -> tuple[str, str]:
    """``data`` as text (bad UTF-8 replaced) and the sha256 of that text in UTF-8, which is
    ``data`` itself when it is valid UTF-8 (no encoded copy then)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        data = text.encode()
    return text, hashlib.sha256(data).hexdigest()


def collected_files(result: Collected, nodeset: str) -> Iterator[tuple[str, str]]:
    """The output tree of ``result``, one file at a time, each dump read from the spool when
    its turn comes: the dumps in node set order (per host ``.yaml``, ``.conf``,
    ``.net.yaml``), ``failed.txt``, and last ``manifest.json``,
    which lists them sorted by path with the sha256 of each (taken as it went by)."""
    listed: list[tuple[str, str, str, str]] = []  # (path, format, host, sha256)
    for h in result.hosts:  # node set order
        if h in result.dumps:
            text, sha = _text(result.dumps[h])
            listed.append((f"{h}.yaml", "lnetctl", h, sha))
            yield f"{h}.yaml", text
        if h not in result.failed:
            text, sha = _text(result.modprobe.get(h, b""))
            if text.strip():
                listed.append((f"{h}.conf", "modprobe", h, sha))
                yield f"{h}.conf", text
        if h in result.nets and h not in result.failed:
            text, sha = _text(result.nets[h])
            listed.append((f"{h}.net.yaml", "lnetctl", h, sha))
            yield f"{h}.net.yaml", text
        text = ""  # not held while the next host's are read
    failed = "".join(f"{h}\t{why}\n" for h, why in sorted(result.failed.items()))
    header = f"# generated by lnetgen {__version__}: hosts of {nodeset} that failed or timed out\n"
    text = header + failed
    listed.append(("failed.txt", "collect", "", hashlib.sha256(text.encode()).hexdigest()))
    yield "failed.txt", text
    manifest = {
        "lnetgen_version": __version__,
        "collected": {
            "nodeset": nodeset,
            "hosts": len(result.hosts),
            "failed": dict(sorted(result.failed.items())),
            "no_nids": dict(sorted(result.no_nids.items())),
        },
        "files": [
            {"path": p, "format": fmt, "role": "live", "hosts": h, "sha256": sha}
            for p, fmt, h, sha in sorted(listed)
        ],
    }
    yield "manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n"
