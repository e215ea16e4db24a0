"""The ``filesystems`` section: the Lustre file systems the servers serve.

Reads ``filesystems[]`` (``name``, ``net_base``, ``mgs``; the MGS is checked by ``lustre``).
Reports E-DUP-NAME for a name used twice and,
once the servers are known, W-FS-EMPTY for a file system none of them serves.
Adds ``Site.filesystems``.
"""

from __future__ import annotations

from collections import Counter

from lnetgen.inventory.context import Context, Registry
from lnetgen.model import FileSystem, Server


def check_filesystems(ctx: Context) -> list[FileSystem]:
    fss: list[FileSystem] = []
    names = Registry.of_names()
    for i, fs in enumerate(ctx.data["filesystems"]):
        names.claim(fs["name"], ("filesystems", i, "name"), "file system")
        fss.append(FileSystem(fs["name"], fs.get("net_base"), fs.get("mgs", "")))
    names.report(ctx)
    return fss


def check_served(ctx: Context, fss: list[FileSystem], servers: list[tuple[int, Server]]) -> None:
    """Warn about file systems without servers (unless some server was left out)."""
    if ctx.incomplete:
        return
    per_fs = Counter(s.fs for _, s in servers)
    for i, f in enumerate(fss):
        if not per_fs[f.name]:
            ctx.warn(
                ("filesystems", i, "name"), "W-FS-EMPTY", f"file system {f.name} has no servers"
            )
