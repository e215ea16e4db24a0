"""The parse cache: what was parsed, keyed by its exact bytes, so that the 25,000 dumps of a
machine that share a route table (or a whole text dump) parse it once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lnetgen.live.state import HostState

#: Drop the parse cache when the text it holds grows past this.
CACHE_BYTES = 256 * 1024 * 1024

#: [(section key, normalized value, line of the key)], lines relative to the text parsed.
Sections = list[tuple[str, Any, int]]


@dataclass
class ParseCache:
    """Parsed pieces keyed by their exact bytes (sections of YAML dumps, whole text dumps)."""

    sections: dict[bytes, Sections] = field(default_factory=dict)
    pieces: dict[bytes, Sections] = field(default_factory=dict)
    texts: dict[tuple[str, bytes], HostState] = field(default_factory=dict)
    size: int = 0

    def remember(self, nbytes: int) -> None:
        """Count ``nbytes`` more text held; past ``CACHE_BYTES`` start over."""
        self.size += nbytes
        if self.size > CACHE_BYTES:
            self.sections.clear()
            self.pieces.clear()
            self.texts.clear()
            self.size = nbytes
