"""Use cases: the single write path, index sync, recall."""
