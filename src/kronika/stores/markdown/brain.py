"""Deprecated: the format of the fact files moved to :mod:`kronika.stores.markdown.facts.brain`
with the rest of the fact files' code; import it from there."""

import warnings

from kronika.stores.markdown.facts.brain import (
    ARCHIVE,
    BRAIN,
    FACT_FILES,
    HISTORY,
    FactsFile,
    canonical_section,
    empty_document,
    insert_fact,
    parse_facts,
    render_fact,
    render_facts_document,
    stamp_hand_facts,
    with_line,
)

warnings.warn(
    "kronika.stores.markdown.brain is deprecated: import from kronika.stores.markdown.facts.brain",
    DeprecationWarning,
    stacklevel=2,
)
__all__ = [
    "ARCHIVE",
    "BRAIN",
    "FACT_FILES",
    "FactsFile",
    "HISTORY",
    "canonical_section",
    "empty_document",
    "insert_fact",
    "parse_facts",
    "render_fact",
    "render_facts_document",
    "stamp_hand_facts",
    "with_line",
]
