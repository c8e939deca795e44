import doctest
from pathlib import Path

from kronika.settings import SETTINGS_TABLE

DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def test_scoring_doc_example_runs():
    result = doctest.testfile(str(DOC), module_relative=False)
    assert result.attempted >= 5 and result.failed == 0


def test_scoring_doc_names_real_settings_with_their_defaults():
    text = DOC.read_text(encoding="utf-8")
    defaults = {spec.name: spec.default for spec in SETTINGS_TABLE}
    for name in (
        "alpha",
        "beta",
        "gamma",
        "decay_base",
        "lexical_weight",
        "fusion",
        "neighbour_weight",
        "neighbour_window",
        "answer_focus",
        "speaker_focus",
        "session_weight",
        "recall_candidates",
        "recall_k",
    ):
        assert f"| `{name}` | {defaults[name]} |" in text
