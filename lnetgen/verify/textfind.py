"""``text.find(needle, start)`` for many needles in one text, in time that does not grow with
how far the needle lies: what locates thousands of findings in one manifest (20,000
``mgs_nids``) or one long modprobe ``routes=`` line without reading the text once per finding.

The answer is exactly ``str.find``'s -- a needle is found inside a longer word too.  The text
is cut into words at separators (blanks and JSON/YAML/modprobe punctuation); any occurrence of
a run of the needle without separators lies inside one word, so an index of every word's
suffixes (sorted, built once) yields every place it may be.

Building the index costs about what reading the text a thousand times with ``str.find`` does, so
look-ups are plain ``str.find`` until they have read the text ``_REPAY`` times: a text with a
few findings never pays for the index, one with thousands pays at most about twice the least
it could.  A text too large to index in bounded memory (more than ``_MAX`` words, or characters
of distinct words; the Blue Waters manifest has a third of that) keeps ``str.find``.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left

#: A run of characters that is not a separator.
_RUN = re.compile(r"[^\s\"',:;=()\[\]{}]+")
#: Times ``str.find`` may read the whole text before the index is built instead.
_REPAY = 1024
#: Suffixes are ordered on their first characters only (bounded memory for long words).
_KEY = 32
#: The most words, and the most characters of distinct words (suffixes), indexed.
_MAX = 1 << 20


class Finder:
    """First occurrences of needles in ``text`` at or after a position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._read = 0  # characters read by str.find so far
        self._words: list[str] = []
        self._where: list[list[int]] = []  # the positions of each distinct word, in order
        self._suffixes: array[int] | None = None  # word << 32 | offset, in suffix order
        self._plain = False  # too large to index: str.find only

    @property
    def indexed(self) -> bool:
        """Whether the index has been built (tests)."""
        return self._suffixes is not None

    def _key(self, entry: int) -> str:
        off = entry & 0xFFFFFFFF
        return self._words[entry >> 32][off : off + _KEY]

    def _index(self) -> array[int] | None:
        ids: dict[str, int] = {}
        chars = 0
        for n, m in enumerate(_RUN.finditer(self.text)):
            word = m.group()
            k = ids.get(word)
            if k is None:
                k = ids[word] = len(self._words)
                self._words.append(word)
                self._where.append([])
                chars += len(word)
            self._where[k].append(m.start())
            if n >= _MAX or chars > _MAX:
                self._words, self._where, self._plain = [], [], True
                return None
        entries = [k << 32 | off for k, w in enumerate(self._words) for off in range(len(w))]
        entries.sort(key=self._key)
        self._suffixes = array("Q", entries)
        return self._suffixes

    def find(self, needle: str, start: int = 0) -> int:
        """``self.text.find(needle, start)`` (``start`` >= 0)."""
        runs = [(m.start(), m.group()) for m in _RUN.finditer(needle)]
        suffixes = self._suffixes
        if suffixes is None and runs and not self._plain and self._read > _REPAY * len(self.text):
            suffixes = self._index()
        if not runs or suffixes is None:
            got = self.text.find(needle, start)
            self._read += max((got if got >= 0 else len(self.text)) - start, 0)
            return got
        # anchor on the longest run: each occurrence of the needle holds it at offset ``at``
        at, run = max(runs, key=lambda r: len(r[1]))
        probe = run[:_KEY]
        best = -1
        i = bisect_left(suffixes, probe, key=self._key)
        while i < len(suffixes) and self._key(suffixes[i]).startswith(probe):
            entry = suffixes[i]
            i += 1
            word, off = self._words[entry >> 32], entry & 0xFFFFFFFF
            if not word.startswith(run, off):
                continue
            shift = off - at  # text position of the needle = word position + shift
            where = self._where[entry >> 32]
            j = bisect_left(where, start - shift)
            while j < len(where):
                pos = where[j] + shift
                if best >= 0 and pos >= best:
                    break
                if pos >= 0 and self.text.startswith(needle, pos):
                    best = pos
                    break
                j += 1
        return best
