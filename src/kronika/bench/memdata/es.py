"""People of ``kronika bench memory`` (es)."""

from __future__ import annotations

from kronika.bench.memdata.model import Person

PEOPLE: tuple[Person, ...] = ()
