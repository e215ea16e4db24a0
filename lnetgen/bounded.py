"""Reading at most N bytes of a file without setting N bytes aside first.

``fh.read(limit + 1)`` allocates a buffer of ``limit + 1`` bytes before it reads anything (a
64 MiB dump limit cost 67 MB to read a 2 MB dump; the 256 MiB manifest limit as much on every
``generate`` over an old tree).  :func:`read_at_most` reads in blocks, so memory follows what is
actually there.
"""

from __future__ import annotations

from typing import BinaryIO

_BLOCK = 1 << 20


def read_at_most(fh: BinaryIO, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of ``fh`` (one more than ``limit`` tells the caller the file is
    too large), read block by block."""
    parts: list[bytes] = []
    total = 0
    while total <= limit:
        block = fh.read(min(_BLOCK, limit + 1 - total))
        if not block:
            break
        parts.append(block)
        total += len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)
