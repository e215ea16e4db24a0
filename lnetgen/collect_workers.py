"""ClusterShell's side of ``lnetgen.collect``: its exec and ssh workers with one client per
host, whose clients start their command in a process group of its own, kill that group when the
command is stopped early or the run is interrupted, and read its output as raw blocks into a
``Sink`` (``lnetgen.collect``'s ``_Output``), which bounds it.  ``lnetgen.collect``'s docstring
says why (**Bounded output**, **No orphans**).  ClusterShell is imported on first use only.

**A command runs as it is written.**  ClusterShell's ssh worker passes it to ``ssh`` untouched,
but its exec worker (``local``, ``collect --exec``) reads it as a template whose delimiter is
``%`` (``string.Template``): ``%h``, ``%host`` and ``%hosts`` stand for the host, ``%n`` and
``%rank`` for its index in the node set (also as ``%{h}``...), ``%%`` for one ``%``, and any other
``%`` raised ClusterShell's ``WorkerError`` when the run began (``printf %s``, ``date +%H``).
``exec_command`` escapes every ``%`` but those placeholders' own, so that the command runs as it
would through ssh but for its placeholders: ``%%`` stays two characters, ``%s`` and ``%hx``
(no placeholder: the name runs on, as in ``string.Template``) are kept as written; ``%{h}x``
puts the host before ``x``.  A literal ``%h`` is written ``%""h`` (the shell joins it back).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
from collections.abc import Iterable
from typing import Any, Protocol

#: The signals that interrupt a run (Ctrl-C, and SIGTERM and SIGHUP, which the CLI turns into an
#: exception).
STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


#: What ClusterShell's exec worker replaces after a ``%`` (or in ``%{...}``): the host (``h``,
#: ``host``, ``hosts``: one host per client here) or its index in the node set (``n``, ``rank``).
EXEC_PLACEHOLDERS = frozenset({"h", "host", "hosts", "n", "rank"})
# a % and what ``string.Template`` (ClusterShell's ``Replacer``) reads as a name after it
_PERCENT = re.compile(
    r"%(?:\{(?P<braced>[_a-z][_a-z0-9]*)\}|(?P<named>[_a-z][_a-z0-9]*))?", re.I | re.A
)


def exec_command(command: str) -> str:
    """``command`` as ClusterShell's exec worker must be given it to run it as it is written but
    for ``EXEC_PLACEHOLDERS`` (the module's docstring): every other ``%`` doubled."""

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["named"]
        return match[0] if name in EXEC_PLACEHOLDERS else "%" + match[0]

    return _PERCENT.sub(one, command)


class Sink(Protocol):
    """Where a worker's output goes, host by host (``lnetgen.collect._Output``)."""

    cut: set[str]  # hosts closed by their time-out, whatever their status

    def add(self, host: str, stderr: bool, data: bytes) -> bool:
        """Keep ``data``; False once ``host`` printed more than its limit (stop it then)."""

    def finish(self, host: str, keep: bool) -> None:
        """``host``'s command ended; ``keep`` its output unless it was killed."""


def kill_group(pid: int) -> None:
    """SIGKILL to the process group of ``pid``, a command started by ``workers``'s clients
    (its group's id) and not yet reaped: the id cannot name another group meanwhile."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def in_own_group(mask: Iterable[int]) -> None:
    """In the child, before it runs its command: lead a process group of its own, with the
    parent's signal mask of before the fork and, as Python's ``subprocess`` does, SIGPIPE and
    SIGXFSZ no longer ignored (Python ignores them; a command inherits what is ignored)."""
    os.setpgrp()
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def kill_running(procs: dict[int, Any]) -> None:
    """Kill the group of every command not yet reaped, ``STOPS`` held back meanwhile
    (a second Ctrl-C would otherwise stop the loop half way)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        for pid, proc in list(procs.items()):
            if proc.returncode is None:
                kill_group(pid)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@functools.cache
def workers() -> tuple[type[Any], type[Any], type[Any]]:
    """ClusterShell's exec and ssh workers, one client per host (``%hosts`` too), whose clients
    start their command in a process group of its own, kill the group when stopped early, and
    read the output as raw blocks into the worker's ``Sink`` (``output``), stopping the
    command past its limit, spooled when it ends; and the event handler that counts a gateway
    tree's lines the same way and spools them.  Built on first use: ClusterShell is imported
    only by ``collect``.  They override ClusterShell's client internals (``_exec_nonblock``,
    ``_handle_read``, ``_close``, ``_create_clients``), the same in its releases 1.9 and 1.10;
    pyproject.toml admits no other."""
    from ClusterShell.Engine.Engine import E_READ, E_WRITE
    from ClusterShell.Event import EventHandler
    from ClusterShell.Worker.Exec import ExecClient, ExecWorker
    from ClusterShell.Worker.fastsubprocess import PIPE, STDOUT, Popen
    from ClusterShell.Worker.Ssh import SshClient, WorkerSsh

    class Client(ExecClient):  # type: ignore[misc]
        def _exec_nonblock(
            self, commandlist: Any, shell: bool = False, env: dict[str, str] | None = None
        ) -> Any:
            # ClusterShell's own, with the child leading a process group: set by the child
            # before it runs the command and by this side at once, whichever comes first; and
            # no interruption until the child is listed for ``kill_running``
            worker = self.worker
            held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
            try:
                proc = Popen(
                    commandlist,
                    bufsize=0,
                    stdin=PIPE,
                    stdout=PIPE,
                    stderr=PIPE if self._stderr else STDOUT,
                    shell=shell,
                    env={**os.environ, **env} if env else None,
                    preexec_fn=functools.partial(in_own_group, held),
                )
                with contextlib.suppress(OSError):
                    os.setpgid(proc.pid, proc.pid)
                worker.procs[proc.pid] = proc
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if self._stderr:
                self.streams.set_stream(worker.SNAME_STDERR, proc.stderr, E_READ)
            self.streams.set_stream(worker.SNAME_STDOUT, proc.stdout, E_READ)
            self.streams.set_stream(worker.SNAME_STDIN, proc.stdin, E_WRITE, retain=False)
            return proc

        def _handle_read(self, sname: str) -> None:
            data = self._read(sname)  # one block; raises at the end of the stream
            worker = self.worker
            if not worker.output.add(self.key, sname == worker.SNAME_STDERR, data):
                self.abort()

        def _close(self, abort: bool, timeout: bool) -> None:
            proc = self.popen
            if abort and proc is not None and proc.returncode is None:
                kill_group(proc.pid)
            try:
                super()._close(abort, timeout)
            finally:
                if proc is not None:
                    self.worker.procs.pop(proc.pid, None)
            if timeout:  # maybe after it exited, with output unread: ClusterShell sees rc 0
                self.worker.output.cut.add(self.key)
            self.worker.output.finish(self.key, not abort and not timeout)

    class SshHostClient(Client, SshClient):  # type: ignore[misc]
        pass

    class PerHost:
        def _create_clients(self, **kwargs: Any) -> None:
            for rank, node in enumerate(self.nodes):  # type: ignore[attr-defined]
                self._add_client(node, rank=rank, **kwargs)  # type: ignore[attr-defined]

    class Exec(PerHost, ExecWorker):  # type: ignore[misc]
        SHELL_CLASS = Client

    class Ssh(PerHost, WorkerSsh):  # type: ignore[misc]
        SHELL_CLASS = SshHostClient

    class Lines(EventHandler):  # type: ignore[misc]
        def __init__(self, output: Sink) -> None:
            super().__init__()
            self.output = output

        def ev_read(self, worker: Any, node: Any, sname: str, msg: Any) -> None:
            del worker
            self.output.add(str(node), sname == "stderr", bytes(msg) + b"\n")

        def ev_hup(self, worker: Any, node: Any, rc: Any) -> None:
            del worker, rc
            self.output.finish(str(node), True)

    return Exec, Ssh, Lines


def tree_enabled(task: Any) -> bool:
    """Whether ClusterShell sends ssh commands through its gateway tree (topology.conf)."""
    enabled = getattr(task, "_default_tree_is_enabled", None)
    return bool(enabled()) if enabled is not None else False


def schedule(
    task: Any,
    ns: Any,
    command: str,
    timeout: float,
    output: Sink,
    procs: dict[int, Any],
    *,
    local: bool,
) -> Any:
    """Schedule ``command`` on every host of ``ns``, standard input closed; ``local``: through
    the exec worker, ``command`` escaped by ``exec_command``."""
    exec_worker, ssh_worker, lines = workers()
    if not local and tree_enabled(task):
        return task.shell(
            command, nodes=ns, timeout=timeout, stderr=True, stdin=False, handler=lines(output)
        )
    cls, command = (exec_worker, exec_command(command)) if local else (ssh_worker, command)
    worker = cls(ns, handler=None, timeout=timeout, command=command, stderr=True)
    worker.output, worker.procs = output, procs
    worker.set_write_eof()
    task.schedule(worker)
    return worker
