"""Gathering live LNet state: ``lnetctl export --backup`` and the modprobe ``lnet`` options of
every host of a node set, in parallel through ClusterShell's task API, into one directory that
``lnetgen diff --live`` reads.

``collect`` runs two commands on every host (ClusterShell's ssh worker, its fan-out and, when
``/etc/clustershell/topology.conf`` names gateways, its tree), and returns one dump per host and
command plus the hosts that failed (non-zero exit, no output) or timed out.  ``collected_files``
turns that into the files of the output tree: ``<host>.yaml`` (the export), ``<host>.conf``
(the modprobe lines, when the host has any), ``failed.txt`` and a ``manifest.json`` that lists
the dumps by host -- the form ``diff --live`` reads, and what lets a later ``collect`` replace
the directory (``lnetgen.write``: it deletes only what it wrote).

With ``local=True`` the commands run on this machine through ClusterShell's exec worker, ``%h``
standing for the host name: for tests, and for sites that reach ``lnetctl`` through a wrapper.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from lnetgen import __version__, nodes
from lnetgen.diagnostics import UsageError, usage

#: What runs on every host: the whole LNet configuration, as `lnetctl import` reads it back.
EXPORT_COMMAND = "lnetctl export --backup"
#: The modprobe configuration of LNet (no file is no error).
MODPROBE_COMMAND = "cat /etc/modprobe.d/*lnet* 2>/dev/null; true"
#: Most hosts one collect may name.
MAX_HOSTS = 100_000
#: The first characters of a host's error output kept as the reason it failed.
REASON_CHARS = 200


@dataclass
class Collected:
    """What came back: ``dumps[host]`` (export output), ``modprobe[host]``, and ``failed[host]``
    (why: exit status and the first line of its error output, or "timed out")."""

    hosts: list[str]
    dumps: dict[str, bytes] = field(default_factory=dict)
    modprobe: dict[str, bytes] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    timed_out: set[str] = field(default_factory=set)


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


def _reason(rc: int, err: bytes) -> str:
    first = err.decode("utf-8", "replace").strip().splitlines()
    text = f"exit status {rc}" + (f": {first[0][:REASON_CHARS]}" if first else "")
    return text if text.isprintable() else repr(text)


def collect(
    hosts: list[str],
    *,
    fanout: int = 64,
    timeout: float = 30.0,
    local: bool = False,
    export_command: str = EXPORT_COMMAND,
    modprobe_command: str = MODPROBE_COMMAND,
) -> Collected:
    """Run both commands on every host in parallel (at most ``fanout`` at a time, each
    within ``timeout`` seconds) and sort the results; nothing is written."""
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet
    from ClusterShell.Task import task_self
    from ClusterShell.Worker.Exec import ExecWorker

    task = task_self()
    saved = task.info("fanout"), task.default("distant_worker")
    ns = NodeSet.fromlist(hosts, resolver=RESOLVER_NOGROUP)
    try:
        task.set_info("fanout", fanout)
        if local:
            task.set_default("distant_worker", ExecWorker)
        export = task.shell(export_command, nodes=ns, timeout=timeout, stderr=True)
        modprobe = task.shell(modprobe_command, nodes=ns, timeout=timeout, stderr=True)
        task.run()
    finally:
        task.set_info("fanout", saved[0])
        task.set_default("distant_worker", saved[1])
    out = Collected(hosts)
    for worker, into in ((export, out.dumps), (modprobe, out.modprobe)):
        errs = {str(n): bytes(buf) for buf, keys in worker.iter_errors() for n in keys}
        for buf, keys in worker.iter_buffers():
            for n in keys:
                into[str(n)] = bytes(buf)
        for rc, keys in worker.iter_retcodes():
            for n in keys:
                if rc != 0 and worker is export:
                    out.failed[str(n)] = _reason(rc, errs.get(str(n), b""))
        out.timed_out.update(str(n) for n in worker.iter_keys_timeout())
    for h in hosts:
        if h in out.timed_out:
            out.failed[h] = f"timed out after {timeout:g} s"
        elif h not in out.failed and not out.dumps.get(h, b"").strip():
            out.failed[h] = "no output from the export command"
    for h in out.failed:
        out.dumps.pop(h, None)
    return out


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def collected_files(result: Collected, nodeset: str) -> Iterable[tuple[str, str]]:
    """The output tree of ``result``: dumps, ``failed.txt`` and ``manifest.json``."""
    files: list[tuple[str, str, str, str]] = []  # (path, text, format, host)
    for h in result.hosts:  # node set order
        if h in result.dumps:
            files.append((f"{h}.yaml", _text(result.dumps[h]), "lnetctl", h))
        text = _text(result.modprobe.get(h, b""))
        if text.strip() and h not in result.failed:
            files.append((f"{h}.conf", text, "modprobe", h))
    failed = "".join(f"{h}\t{why}\n" for h, why in sorted(result.failed.items()))
    header = f"# generated by lnetgen {__version__}: hosts of {nodeset} that failed or timed out\n"
    files.append(("failed.txt", header + failed, "collect", ""))
    manifest = {
        "lnetgen_version": __version__,
        "collected": {
            "nodeset": nodeset,
            "hosts": len(result.hosts),
            "failed": dict(sorted(result.failed.items())),
        },
        "files": [
            {
                "path": p,
                "format": fmt,
                "role": "live",
                "hosts": h,
                "sha256": hashlib.sha256(t.encode()).hexdigest(),
            }
            for p, t, fmt, h in sorted(files)
        ],
    }
    out = [(p, t) for p, t, _f, _h in files]
    out.append(("manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n"))
    return out
