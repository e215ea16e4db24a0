"""Live LNet state: read what real nodes print (lnetctl YAML, lctl tables, modprobe files) and
normalize it into one state per host, for ``lnetgen diff`` to compare with the plan.

Layers, lowest first: ``state``, ``errors`` and ``cache``; ``block_yaml``; ``normalize``; the
readers (``lnetctl_sections`` + ``lnetctl``, ``lctl``, ``modprobe``); ``files``; ``dump`` (one
file to one state, the format told by content); ``manifest`` and ``assemble`` (a PATH to a
``LiveSet``).
"""

from __future__ import annotations

from lnetgen.live.assemble import merge_states, read_live
from lnetgen.live.block_yaml import MAX_DEPTH
from lnetgen.live.dump import detect_format, parse_dump, read_dump
from lnetgen.live.errors import LiveParseError
from lnetgen.live.files import MAX_FILE_BYTES, host_of
from lnetgen.live.manifest import MAX_MANIFEST_HOSTS
from lnetgen.live.state import (
    BACKUP,
    CONFIG,
    EXPORT,
    LCTL_ROUTES,
    LCTL_SHOW_ROUTE,
    MODPROBE,
    NET_SHOW,
    ROUTE_SHOW,
    ROUTE_SHOW_V,
    ROUTING_SHOW,
    UNDEFINED_HOP,
    HostState,
    LiveSet,
    NetTable,
    RouteKey,
    RouteTable,
)

__all__ = [
    "BACKUP",
    "CONFIG",
    "EXPORT",
    "LCTL_ROUTES",
    "LCTL_SHOW_ROUTE",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_MANIFEST_HOSTS",
    "MODPROBE",
    "NET_SHOW",
    "ROUTE_SHOW",
    "ROUTE_SHOW_V",
    "ROUTING_SHOW",
    "UNDEFINED_HOP",
    "HostState",
    "LiveParseError",
    "LiveSet",
    "NetTable",
    "RouteKey",
    "RouteTable",
    "detect_format",
    "host_of",
    "merge_states",
    "parse_dump",
    "read_dump",
    "read_live",
]
