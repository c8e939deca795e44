"""The item indexes of the conformance suite: ``opener`` opens each of
:data:`backends.INDEXES` on fresh storage, ``index`` is one opened. A new index plugs in
here (and in :class:`backends.IndexOpener`); PostgreSQL needs the ``postgres`` and
``postgres-local`` extras and is skipped without them (``postgres_url``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends import INDEXES, IndexOpener


@pytest.fixture(params=INDEXES)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> IndexOpener:
    if request.param == "sqlite":
        return IndexOpener("sqlite", str(tmp_path / "index.sqlite"))
    return IndexOpener(request.param, request.getfixturevalue("postgres_url"))


@pytest.fixture
def index(opener: IndexOpener) -> Iterator[Any]:
    ix = opener()
    yield ix
    ix.close()
