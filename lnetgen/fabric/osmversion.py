"""Which OpenSM ``fabric check`` runs: ``opensm --version`` prints ``OpenSM 3.3.23`` (after a
line of dashes) and exits at once, touching no fabric.  The version goes into the
``measured:`` text ``fabric check`` tells the site to record (:func:`lnetgen.fabric.advise.
measured_text`), so a recorded figure names the OpenSM that produced it.
"""

from __future__ import annotations

import re
import subprocess
import threading
from typing import BinaryIO, cast

from lnetgen.bounded import read_at_most

#: What a version may hold: it is quoted into YAML and written into opensm.conf comments.
_VERSION_RE = re.compile(r"\bOpenSM ([0-9]{1,4}(?:\.[0-9A-Za-z_-]{1,16}){1,5})\b")
#: Output read from ``opensm --version``: its line is among the first few.
_READ = 4096


def opensm_version(program: str = "opensm", timeout: float = 10.0) -> str:
    """``"OpenSM 3.3.23"`` as ``opensm --version`` prints it; ``"OpenSM"`` alone when the
    program is missing, fails, takes longer than ``timeout`` or prints no version.  At most
    a few KiB of its output are read; the program is stopped by its pid after that."""
    try:
        proc = subprocess.Popen(
            [program, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    except OSError:
        return "OpenSM"
    timer = threading.Timer(timeout, proc.kill)  # a program that hangs ends the read
    timer.start()
    try:
        out = read_at_most(cast(BinaryIO, proc.stdout), _READ)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    m = _VERSION_RE.search(out[:_READ].decode("utf-8", "replace"))
    return f"OpenSM {m.group(1)}" if m else "OpenSM"


__all__ = ["opensm_version"]
