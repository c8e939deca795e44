"""The derived SQLite index: items, FTS5 lexical search, cached embeddings, usage statistics."""

from kronika.stores.sqlite.index import SqliteIndex

__all__ = ["SqliteIndex"]
