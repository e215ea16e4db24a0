"""Emitters: one module per output format, registered in ``REGISTRY`` (name -> emit function).

Adding a format touches one module and this table.  ``DEFAULT_FORMATS`` is what ``lnetgen
generate`` writes without ``--formats``.
"""

from __future__ import annotations

from lnetgen.emit import ansible, lnetctl, modprobe, opensm, routes
from lnetgen.emit.base import Context, Emitter, OutFile

REGISTRY: dict[str, Emitter] = {
    lnetctl.FORMAT: lnetctl.emit,
    modprobe.FORMAT: modprobe.emit,
    opensm.FORMAT: opensm.emit,
    routes.FORMAT: routes.emit,
    ansible.FORMAT: ansible.emit,
}

DEFAULT_FORMATS: tuple[str, ...] = tuple(REGISTRY)

__all__ = ["DEFAULT_FORMATS", "REGISTRY", "Context", "Emitter", "OutFile"]
