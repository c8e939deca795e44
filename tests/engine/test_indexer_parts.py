"""The :class:`~kronika.engine.indexer.Indexer` is one small object over named parts
(``indexer.vectors``, ``indexer.appends``, ``indexer.losses``) sharing one
:class:`~kronika.engine.indexer.state.IndexerState`, not a stack of mixins; its flat
names (``indexer.fill_vectors``) are the parts' verbs.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import get_type_hints

import pytest

from kronika.core.alias import Alias
from kronika.engine.indexer import Indexer, SyncReport
from kronika.engine.indexer.state import IndexerState
from kronika.stores.markdown import MarkdownWorkspace
from kronika.stores.sqlite import SqliteIndex
from kronika.testing import HashingEmbedder

PARTS = ["state", "vectors", "appends", "losses"]


@pytest.fixture
def indexer(tmp_path: Path) -> Iterator[Indexer]:
    workspace = MarkdownWorkspace(tmp_path)
    workspace.initialize()
    workspace.create_agent("jaskier")
    embedder = HashingEmbedder()
    with SqliteIndex(tmp_path / "index.sqlite", embedding_model="m", dim=embedder.dim) as index:
        yield Indexer(workspace=workspace, index=index, embedder=embedder)


def test_the_indexer_is_one_object_not_a_mixin_stack() -> None:
    assert Indexer.__mro__ == (Indexer, object)
    hints = get_type_hints(Indexer)
    for name in PARTS:
        part = hints[name]
        assert part.__mro__ == (part, object), f"indexer.{name} inherits: {part.__mro__}"


def test_every_flat_name_is_a_parts_verb() -> None:
    hints = get_type_hints(Indexer)
    aliases = {name: a for name, a in vars(Indexer).items() if isinstance(a, Alias)}
    assert set(aliases) == {"session_tail", "forget_tail", "waiting", "fill_vectors"}
    for name, alias in aliases.items():
        assert getattr(Indexer, name) is getattr(hints[alias.part], alias.verb), name


def test_the_parts_share_one_state_and_a_sync_goes_through_them(indexer: Indexer) -> None:
    assert all(getattr(indexer, name).state is indexer.state for name in PARTS[1:])
    assert indexer.appends.vectors is indexer.vectors
    assert IndexerState.__mro__ == (IndexerState, object)
    folder = indexer.state.workspace.agent_dir("jaskier")
    (folder / "sessions").mkdir(exist_ok=True)
    (folder / "brain.md").write_text("# Brain\n\n## User\n\n- Geralt likes horses\n")
    report = indexer.sync_agent("jaskier")
    assert isinstance(report, SyncReport) and report.items_indexed == 1
    assert report.texts_embedded == 1  # the vectors part embedded it
    assert set(indexer.state.seen) == {"jaskier"}  # the marks the next sync compares
    assert indexer.sync_agent("jaskier").files_indexed == 0
    assert not indexer.waiting()


def test_the_old_module_path_still_works_and_warns() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.modules.pop("kronika.engine.sync", None)
        old = importlib.import_module("kronika.engine.sync")
    assert old.Indexer is Indexer
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
