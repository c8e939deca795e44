"""The people of ``kronika bench memory``, their split and their folds.

**Split by person.** Within each language the people are taken in the order of their
ids: the first, third, … are ``dev``, the second, fourth, … ``test``. A person's
questions (cross-lingual ones included) are always in that person's split, so nothing
a tuning run looks at in ``dev`` is asked again in ``test``.

**Folds.** :func:`folds` leaves one person out at a time (leave-one-person-out): a
tuning script chooses a setting on the other people and measures it on the one held
out, for every person in turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from kronika.bench.memdata import en, es, pl, uk
from kronika.bench.memdata.model import KINDS, LANGUAGES, Person, Question

Split = Literal["dev", "test", "all"]
SPLITS: tuple[Split, ...] = ("dev", "test", "all")

PEOPLE: tuple[Person, ...] = (*en.PEOPLE, *pl.PEOPLE, *es.PEOPLE, *uk.PEOPLE)


def split_of(person: Person) -> Literal["dev", "test"]:
    """``dev`` for the 1st, 3rd… person of a language by id, ``test`` for the 2nd, 4th…"""
    same = sorted(p.pid for p in PEOPLE if p.lang == person.lang)
    return "dev" if same.index(person.pid) % 2 == 0 else "test"


def people(split: Split = "all") -> tuple[Person, ...]:
    """The people of ``split`` (``all``: everyone), in a fixed order."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose dev, test or all")
    return tuple(p for p in PEOPLE if split == "all" or split_of(p) == split)


def folds(split: Split = "all") -> Iterator[tuple[Person, tuple[Person, ...]]]:
    """Leave-one-person-out over ``split``: ``(held out, the others)`` for each person."""
    chosen = people(split)
    for held in chosen:
        yield held, tuple(p for p in chosen if p.pid != held.pid)


def questions(split: Split = "all") -> list[tuple[Person, Question]]:
    return [(p, q) for p in people(split) for q in p.questions]


__all__ = [
    "KINDS",
    "LANGUAGES",
    "PEOPLE",
    "SPLITS",
    "Person",
    "Question",
    "Split",
    "folds",
    "people",
    "questions",
    "split_of",
]
