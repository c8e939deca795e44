"""Numbers on the command line that only the CLI reads: checked as they are parsed,
so a bad one exits 2 naming the option and the range it must be in."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def count_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    return parse
