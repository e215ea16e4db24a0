"""``verify``: read a generated tree (or live dumps) and its manifest, then prove every file
system deployable -- declarations, routes, pairs, mount NIDs -- into a ``VerifyResult``."""

from __future__ import annotations

import os
from collections.abc import Container

from lnetgen import nodes
from lnetgen.diagnostics import Diagnostic, InputError, UsageError
from lnetgen.progress import NO_PROGRESS, Progress
from lnetgen.verify.accept import check_tunables
from lnetgen.verify.declared import DeclaredChecker
from lnetgen.verify.findings import Collector, VerifyResult
from lnetgen.verify.locate import Locator
from lnetgen.verify.manifest import Manifest, read_manifest
from lnetgen.verify.pairs import FsProof, PairChecker, mount
from lnetgen.verify.ping import ping_plan
from lnetgen.verify.reach import Prover
from lnetgen.verify.rules import with_scripts
from lnetgen.verify.world import World, index_nids, read_live_world, read_tree


def _usage(message: str) -> UsageError:
    return UsageError([Diagnostic("", 0, 0, "error", "E-USAGE", "$", message)])


def _scope(world: World, hosts: str | None) -> None:
    if hosts is None:
        return
    try:
        world.limit(hosts)
    except nodes.NodeSyntaxError as exc:
        raise _usage(f"--hosts {hosts!r}: {exc}") from None
    if not world.scoped:
        raise _usage(f"--hosts {hosts!r} names no host of the tree")


def _hosts(hosts: str | None) -> Container[str] | None:
    """The hosts of ``--hosts`` (None: every host), as a node set (not expanded)."""
    if hosts is None:
        return None
    try:
        scope: Container[str] = nodes.nodeset(hosts)
    except nodes.NodeSyntaxError as exc:
        raise _usage(f"--hosts {hosts!r}: {exc}") from None
    return scope


def _notes(world: World, out: Collector) -> None:
    """The readers' health notes of endpoints in scope, as warnings."""
    for ep in sorted(world.endpoints.values(), key=lambda e: e.name):
        if world.in_scope(ep):
            for note in ep.state.all_health:
                out.add("V-NOTE", ep.file, 0, 0, "$", f"{ep.name}: {note}")


def _proofs(
    world: World, manifest: Manifest, out: Collector, loc: Locator, progress: Progress
) -> list[FsProof]:
    declared = DeclaredChecker(world, manifest, out, loc)
    pairs = PairChecker(world, manifest, Prover(world), out, loc)
    proofs = []
    clients = sorted(
        (e for e in world.endpoints.values() if e.role == "client"), key=lambda e: e.name
    )
    for fs in manifest.filesystems.values():
        p = FsProof(
            fs,
            declared.servers(fs),
            # a client file that names no file system mounts them all
            [c for c in clients if not c.fs or fs.name in c.fs],
        )
        declared.mgs(fs)
        declared.mkfs(fs)
        pairs.prove(p, progress(f"proving {fs.name}", len(p.clients)))
        mount(pairs, p)
        proofs.append(p)
    for ep in sorted(world.endpoints.values(), key=lambda e: e.name):
        if ep.role == "router" and world.in_scope(ep):
            pairs.routes(ep)
    declared.mgs_formatted_once()
    pairs.flush()
    return proofs


def verify(
    out_dir: str | None,
    *,
    live: str | None = None,
    manifest: str | None = None,
    hosts: str | None = None,
    ping: bool = False,
    progress: Progress = NO_PROGRESS,
) -> VerifyResult:
    """Prove the file systems of the generated tree ``out_dir`` (or of the live dumps at
    ``live``, roles from ``out_dir``'s manifest or ``manifest``), limited to pairs with an end
    in ``hosts`` when given; with ``ping``, ``result.ping`` holds the ping plan.  ``progress``
    is ticked per file read and per client class proved.

    Raises ``UsageError`` for bad options and ``InputError`` when the manifest or the tree
    cannot be used (exit 2)."""
    if out_dir is None and manifest is None:
        raise _usage("give OUT_DIR, or --manifest with --live")
    if out_dir is not None and not os.path.isdir(out_dir):
        raise InputError(
            [Diagnostic(out_dir, 0, 0, "error", "E-VERIFY-TREE", "$", "not a directory")]
        )
    if live is None and out_dir is None:
        raise _usage("--manifest without --live: give OUT_DIR to verify a generated tree")
    # a manifest or PATH named on the command line is followed; no link below a directory is
    mpath = manifest or os.path.join(str(out_dir), "manifest.json")
    m = read_manifest(mpath, "" if manifest else str(out_dir))
    if live is not None:
        world = read_live_world(live, m, _hosts(hosts), out_dir)
    else:
        world = read_tree(str(out_dir), m, progress)
    _scope(world, hosts)
    index_nids(world, m, out_dir)
    out = Collector()
    out.extend(world.findings)
    # a tree's client classes take their UDSP rules from their scripts, before any checker
    with_scripts(world, m, out)
    _notes(world, out)
    if live is not None:
        loc = Locator(live if os.path.isdir(live) else "")
    else:
        loc = Locator(str(out_dir))
    proofs = _proofs(world, m, out, loc, progress)
    check_tunables(world, out, loc)
    result = VerifyResult(live if live is not None else str(out_dir), mpath)
    result.counts = {p.fs.name: p.counts for p in proofs}
    result.findings = out.sorted()
    if ping:
        result.ping = ping_plan(m, proofs, world.in_scope)
    return result
