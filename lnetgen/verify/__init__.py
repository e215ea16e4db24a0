"""``lnetgen verify``: prove from the emitted per-host files (or live dumps) and the manifest
that every file system can start and be mounted -- clients reach every server and the MGS,
servers reach each other and every client, through sound single-hop routes, symmetrically.

Layers, lowest first: ``findings`` (codes, counts, result); ``manifest``; ``world`` (endpoints
and NID index, read with ``lnetgen.live``); ``locate``; ``reach`` (route verdicts and
reachability); ``declared`` and ``pairs`` (the checks); ``ping``; ``proof`` (the entry point);
``report``.
"""

from __future__ import annotations

from lnetgen.verify.findings import CODES, KINDS, Count, VerifyResult
from lnetgen.verify.manifest import Manifest, parse_manifest, read_manifest
from lnetgen.verify.proof import verify
from lnetgen.verify.report import format_text, to_dict

__all__ = [
    "CODES",
    "KINDS",
    "Count",
    "Manifest",
    "VerifyResult",
    "format_text",
    "parse_manifest",
    "read_manifest",
    "to_dict",
    "verify",
]
