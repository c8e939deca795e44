"""The OpenAPI document's agent-name pattern says exactly what kronika accepts."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kronika.errors import InvalidAgentName
from kronika.stores.markdown.layout import AGENT_NAME_PATTERN, validate_agent_name

PATTERN = re.compile(AGENT_NAME_PATTERN.replace("$", r"\Z"))
"""As ECMA-262 reads it: ``$`` is the very end (Python's ``$`` also matches before a
final newline)."""
NAMEISH = st.text(alphabet="aAbcCnNoOmMlLpPtTuUxX0123456789._- ", max_size=70)


def _accepted(name: str) -> bool:
    try:
        validate_agent_name(name)
    except InvalidAgentName:
        return False
    return True


@given(
    st.one_of(
        NAMEISH, st.text(max_size=70), st.sampled_from(["con", "NUL.md", "com1", "a.", "a\n"])
    )
)
def test_the_pattern_and_the_check_agree(name: str) -> None:
    assert bool(PATTERN.search(name)) == _accepted(name)


def test_the_pattern_takes_ordinary_names_and_refuses_devices() -> None:
    assert PATTERN.search("alice") and PATTERN.search("bot-2.v1_x")
    for refused in ("con", "Aux.md", "lpt9", "a.", "-a", "", "a" * 65):
        assert not PATTERN.search(refused), refused
