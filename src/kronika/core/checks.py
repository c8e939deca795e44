"""Checks on what callers pass to :class:`kronika.memory.Memory`, so bad input is a
:class:`~kronika.errors.KronikaError` saying what was wrong, never a ``TypeError``
or an ``OverflowError`` from deep inside.

Text must be ``str`` without lone surrogates (``"\\udcff"``: what Python makes of
bytes that were not UTF-8, e.g. in a command-line argument; they cannot be written
to a UTF-8 file) and without NUL (``"\\x00"``, which PostgreSQL cannot store: refused
on every backend alike). Numbers must be ``int`` (not ``bool``) inside a stated range.
A fact key must survive the Brain's ``- **key**: value`` line, so it may not hold
``**:``, which would end the key early.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from kronika.core.model import RetainKind
from kronika.errors import InvalidInput, KronikaError

MAX_K = 10_000
"""The most results one recall returns."""
MAX_BUDGET_TOKENS = 10_000_000
MAX_LIMIT = 1_000_000
"""The most items or audit entries one listing returns."""
MAX_OFFSET = 1_000_000_000

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NUL = "\x00"
KEY_END = "**:"


def text(value: object, *, what: str, error: type[KronikaError] = InvalidInput) -> str:
    """``value`` when it is a ``str`` that can be written as UTF-8, else ``error``."""
    if not isinstance(value, str):
        raise error(f"{what} must be text (str), not {type(value).__name__}")
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise error(
            f"{what} holds {bad.group()!r} at position {bad.start()}, which is not a Unicode"
            " character (bytes that were not UTF-8?); pass the text as UTF-8"
        )
    if _NUL in value:
        raise error(
            f"{what} holds a NUL character (\\x00) at position {value.index(_NUL)};"
            " text cannot hold it"
        )
    return value


def optional_text(
    value: object, *, what: str, error: type[KronikaError] = InvalidInput
) -> str | None:
    return None if value is None else text(value, what=what, error=error)


def texts(
    values: object, *, what: str, error: type[KronikaError] = InvalidInput
) -> tuple[str, ...]:
    """A list or tuple of texts (a bare ``str`` is refused: it would be read letter by letter)."""
    if isinstance(values, str) or not isinstance(values, Sequence | set | frozenset):
        raise error(f"{what} must be a list of texts, not {type(values).__name__}")
    return tuple(text(v, what=f"each of {what}", error=error) for v in values)


def count(
    value: object,
    *,
    what: str,
    low: int,
    high: int,
    error: type[KronikaError] = InvalidInput,
) -> int:
    """``value`` when it is an ``int`` in ``[low, high]``, else ``error`` naming the range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{what} must be a whole number, not {type(value).__name__}")
    if not low <= value <= high:
        raise error(f"{what} must be between {low} and {high}, got {value}")
    return value


def optional_count(
    value: object,
    *,
    what: str,
    low: int,
    high: int,
    error: type[KronikaError] = InvalidInput,
) -> int | None:
    return None if value is None else count(value, what=what, low=low, high=high, error=error)


def moment_or_text(
    value: object, *, what: str, error: type[KronikaError] = InvalidInput
) -> str | datetime | None:
    """A time given as text (``30d``, ``2025-11-01``…) or a ``datetime``, or ``None``."""
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise error(f"{what} must be text or a datetime, not {type(value).__name__}")
    return text(value, what=what, error=error)


def aware(value: object, *, what: str, error: type[KronikaError] = InvalidInput) -> None:
    """``error`` when ``value`` is a ``datetime`` without a time zone: kronika compares
    times across zones, and a naive one cannot be compared with them."""
    if isinstance(value, datetime) and value.utcoffset() is None:
        raise error(
            f"{what} must be a datetime with a time zone (such as datetime.now(UTC)),"
            f" not the naive {value.isoformat()}"
        )


def moment(value: object, *, what: str) -> datetime | None:
    """``None`` or a ``datetime``."""
    if value is not None and not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, not {type(value).__name__}")
    return value


def fraction(value: object, *, what: str) -> float | None:
    """``None``, or a number from 0 to 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{what} must be a number, not {type(value).__name__}")
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{what} must be between 0 and 1, got {value}")
    return float(value)


def retain_kind(value: object) -> RetainKind | None:
    """``None``, or a retain kind: ``W``, ``B``, ``O``, ``S`` (or their names)."""
    if value is None or isinstance(value, RetainKind):
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"the kind must be W, B, O or S, not {type(value).__name__}")
    names = {k.name.casefold(): k for k in RetainKind}
    try:
        return RetainKind(value.strip().upper())
    except ValueError:
        pass
    if value.strip().casefold() in names:
        return names[value.strip().casefold()]
    raise InvalidInput(
        f"the kind must be W (world), B (experience), O (opinion) or S (observation), not {value!r}"
    )


def fact_key(key: str) -> str:
    """``key`` when its Brain line reads back as the same key (see the module)."""
    if "\n" in key or "\r" in key:
        raise InvalidInput("a key must be one line")
    if KEY_END in " ".join(key.split()):
        raise InvalidInput(
            f"a key may not contain {KEY_END!r}: in the Brain's `- **key**: value` line it"
            f" would end the key early ({key!r})"
        )
    return key
