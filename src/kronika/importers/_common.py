"""Helpers shared by the importers: reading JSON files and turning names into safe ones."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from kronika.core.timeexpr import parse_loose_datetime
from kronika.errors import ImportFormatError

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1 << 20


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def load_json(path: str | Path) -> Any:
    """Parse a (possibly gzipped) JSON file; errors become ImportFormatError."""
    p = Path(path)
    try:
        with _open_text(p) as fh:
            return json.load(fh)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise ImportFormatError(f"cannot read {p}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{p}: not valid JSON ({exc})") from exc


class _ChunkedText:
    """A window onto a text stream that grows only as far as the decoder needs."""

    def __init__(self, fh: IO[str], where: Path) -> None:
        self._fh, self._where = fh, where
        self._decoder = json.JSONDecoder()
        self.text, self.pos, self.eof = "", 0, False

    def _fill(self) -> bool:
        if self.eof:
            return False
        # Reading at least as much as is buffered keeps re-parsing of a long item linear.
        chunk = self._fh.read(max(_CHUNK, len(self.text) - self.pos))
        if not chunk:
            self.eof = True
            return False
        self.text, self.pos = self.text[self.pos :] + chunk, 0
        return True

    def peek(self) -> str:
        """The next non-blank character ("" at the end of the stream)."""
        while True:
            self.pos = _skip_blank(self.text, self.pos)
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._fill():
                return ""

    def value(self) -> Any:
        """Decode the JSON value that starts at the next non-blank character."""
        self.peek()
        while True:
            try:
                item, end = self._decoder.raw_decode(self.text, self.pos)
                # A value that ends the buffer may be cut short (a number): read on.
                if end < len(self.text) or self.eof:
                    self.pos = end
                    return item
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise ImportFormatError(f"{self._where}: not valid JSON ({exc})") from exc
            self._fill()


def _skip_blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def iter_json_list(path: str | Path) -> Iterator[Any]:
    """The items of a top-level JSON list (plain or gzipped), decoded one at a time.

    A LongMemEval_S file is ~160 MB of text; decoding it whole costs ~1.5 GB, while
    streaming keeps only the current item (and a small read-ahead) in memory.
    """
    p = Path(path)
    try:
        with _open_text(p) as fh:
            stream = _ChunkedText(fh, p)
            if stream.peek() != "[":
                raise ImportFormatError(f"{p}: expected a JSON list")
            stream.pos += 1
            if stream.peek() == "]":
                return
            while True:
                yield stream.value()
                sep = stream.peek()
                if sep == "]":
                    return
                if sep != ",":
                    raise ImportFormatError(f"{p}: expected ',' or ']' after an item")
                stream.pos += 1
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise ImportFormatError(f"cannot read {p}: {exc}") from exc


def parse_timestamp(text: object, what: str) -> datetime:
    """A dataset timestamp as UTC, or ImportFormatError naming ``what`` when unreadable."""
    parsed = parse_loose_datetime(text) if isinstance(text, str) else None
    if parsed is None:
        raise ImportFormatError(f"{what}: cannot read the timestamp {text!r}")
    return parsed


def safe_name(raw: str) -> str:
    """``raw`` itself when it is a safe agent name, else a sanitised form plus a short hash.

    The hash keeps two different unsafe names from collapsing into the same agent.
    """
    if SAFE_NAME.match(raw):
        return raw
    digest = hashlib.sha1(raw.encode("utf-8")).hexdigest()[:8]
    stem = _UNSAFE_CHARS.sub("-", raw).strip("-._")[:55] or "q"
    return f"{stem}-{digest}"
