"""Settings come in groups; the file format and the flat names keep working."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import pytest

from kronika.engine.recall import RecallSettings
from kronika.errors import ConfigError
from kronika.settings import (
    GROUPS,
    SETTINGS_TABLE,
    LlmGroup,
    RecallGroup,
    Settings,
    default_config_text,
    load_settings,
)


def test_a_config_file_and_env_vars_fill_the_groups(tmp_path: Path) -> None:
    (tmp_path / "kronika.toml").write_text(
        'recall_k = 4\nembedder = "hashing"\nllm_timeout = 5\ntenant = "acme"\n'
        "[agents.jaskier]\nautonomy = 1\n",
        encoding="utf-8",
    )
    env = {"KRONIKA_LEXICAL_WEIGHT": "0.7", "KRONIKA_RERANKER_DEPTH": "12"}
    settings = load_settings(tmp_path, environ=env, idle_minutes=10)
    assert settings.recall.recall_k == settings.recall_k == 4
    assert settings.recall.lexical_weight == settings.lexical_weight == 0.7
    assert settings.embedding.embedder == "hashing"
    assert settings.llm.llm_timeout == 5.0
    assert settings.reranker.reranker_depth == 12
    assert settings.sessions.idle_minutes == 10.0
    assert settings.workspace.tenant == "acme"
    assert settings.workspace.home == settings.home == tmp_path
    assert settings.policy("jaskier").autonomy == 1
    # what was not given keeps its default
    assert settings.recall.recall_candidates == RecallGroup().recall_candidates


def test_a_bad_value_in_a_group_still_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "kronika.toml").write_text('fusion = "average"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'fusion'"):
        load_settings(tmp_path, environ={})
    with pytest.raises(ConfigError, match="unknown setting 'recall_kk'"):
        Settings().with_overrides(recall_kk=3)


def test_with_overrides_changes_only_the_named_settings() -> None:
    base = Settings()
    changed = base.with_overrides(recall_k="3", embedder="hashing", llm_model=None)
    assert changed.recall == RecallGroup(recall_k=3)
    assert changed.embedding.embedder == "hashing"
    assert changed.llm == base.llm
    assert base.recall_k == 10  # the original is untouched


def test_every_flat_name_reads_its_group_and_none_can_be_set() -> None:
    settings = load_settings("/nowhere", environ={"KRONIKA_EMBEDDER": "hashing"})
    for _, attr, group in GROUPS:
        for f in fields(group):
            assert getattr(settings, f.name) == getattr(getattr(settings, attr), f.name)
    assert {spec.name for spec in SETTINGS_TABLE} <= set(dir(settings))
    # a frozen slots dataclass refuses a name outside its fields with TypeError
    with pytest.raises((FrozenInstanceError, TypeError)):
        settings.recall_k = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        settings.recall.recall_k = 5  # type: ignore[misc]


def test_recall_reads_its_group_and_its_defaults_are_the_groups() -> None:
    settings = Settings()
    made = RecallSettings.of(settings.recall, settings.reranker, settings.embedder)
    assert made == RecallSettings()  # one set of defaults, written on the groups
    tuned = settings.with_overrides(
        recall_candidates=40, relevance_floor="auto", embedder="hashing", alpha=1.0
    )
    made = RecallSettings.of(tuned.recall, tuned.reranker, tuned.embedder)
    assert made.candidates == 40
    assert made.relevance_floor == 0.0  # auto: no calibrated floor for hashing
    assert made.weights.alpha == 1.0


def test_the_init_file_lists_each_group_once_and_its_values_load_back(tmp_path: Path) -> None:
    text = default_config_text().split("# Per-agent write policy")[0]
    for heading, _, _ in GROUPS:
        assert text.count(f"# --- {heading} ---") == 1, heading
    lines = [line[2:] for line in text.splitlines() if re.match(r"# \w+ = ", line)]
    assert len(lines) == len(SETTINGS_TABLE) - 1  # all but home
    (tmp_path / "kronika.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_settings(tmp_path, environ={}) == Settings().with_overrides(home=tmp_path)


def test_flat_keyword_arguments_still_build_settings_with_a_deprecation_warning(
    tmp_path: Path,
) -> None:
    with pytest.warns(DeprecationWarning, match=re.escape("Settings().with_overrides(recall_k=")):
        old = Settings(recall_k=5, home=str(tmp_path), embedder="hashing")
    assert old == Settings().with_overrides(recall_k=5, home=tmp_path, embedder="hashing")
    assert old.recall.recall_k == old.recall_k == 5
    assert old.workspace.home == old.home == tmp_path  # a Path, as from every other source
    assert old.recall.recall_candidates == RecallGroup().recall_candidates
    # a flat name whose group is not given goes into its group beside the given ones
    with pytest.warns(DeprecationWarning):
        mixed = Settings(llm=LlmGroup(llm_model="small"), recall_k=5)
    assert (mixed.llm_model, mixed.recall_k) == ("small", 5)
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigError, match="'recall_k'"):
        Settings(recall_k="many")  # checked as every other source is


def test_groups_build_settings_and_a_flat_name_beside_its_own_group_is_refused() -> None:
    grouped = Settings(recall=RecallGroup(recall_k=3), llm=LlmGroup(llm_model="small"))
    assert (grouped.recall_k, grouped.llm_model) == (3, "small")  # and no warning
    assert grouped.embedding == Settings().embedding
    with pytest.raises(TypeError, match=r"both recall= and recall_k=.*with_overrides"):
        Settings(recall=RecallGroup(recall_k=3), recall_k=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'recall_kk'"):
        Settings(recall_kk=5)
    # dataclasses.replace passes every group: a flat name there is as ambiguous
    with pytest.raises(TypeError, match="both recall= and recall_k="):
        replace(grouped, recall_k=5)
    assert replace(grouped, recall=RecallGroup(recall_k=4)).recall_k == 4


def test_the_postgres_hnsw_settings_default_to_pgvectors_own_and_are_checked(
    tmp_path: Path,
) -> None:
    from kronika.stores.postgres.search import HnswOptions

    settings = load_settings(tmp_path, environ={})
    built = HnswOptions(
        m=settings.postgres_hnsw_m,
        ef_construction=settings.postgres_hnsw_ef_construction,
        search_margin=settings.postgres_hnsw_search_margin,
    )
    assert built == HnswOptions() == HnswOptions(16, 64, 40)
    env = {
        "KRONIKA_POSTGRES_HNSW_M": "32",
        "KRONIKA_POSTGRES_HNSW_EF_CONSTRUCTION": "128",
        "KRONIKA_POSTGRES_HNSW_SEARCH_MARGIN": "0",
    }
    settings = load_settings(tmp_path, environ=env)
    assert (settings.recall.postgres_hnsw_m, settings.postgres_hnsw_ef_construction) == (32, 128)
    assert settings.postgres_hnsw_search_margin == 0
    for name, value, said in (
        ("KRONIKA_POSTGRES_HNSW_M", "1", "'postgres_hnsw_m' must be from 2 to 100"),
        ("KRONIKA_POSTGRES_HNSW_M", "101", "'postgres_hnsw_m' must be from 2 to 100"),
        ("KRONIKA_POSTGRES_HNSW_EF_CONSTRUCTION", "1001", "must be from 4 to 1000"),
        ("KRONIKA_POSTGRES_HNSW_SEARCH_MARGIN", "-1", "must be from 0 to 1000"),
        ("KRONIKA_POSTGRES_HNSW_SEARCH_MARGIN", "1001", "must be from 0 to 1000"),
        ("KRONIKA_POSTGRES_HNSW_M", "many", "expects int"),
    ):
        with pytest.raises(ConfigError, match=re.escape(said)):
            load_settings(tmp_path, environ={name: value})
    twice = "'postgres_hnsw_ef_construction' (64) must be at least twice 'postgres_hnsw_m' (40)"
    with pytest.raises(ConfigError, match=re.escape(twice)):
        load_settings(tmp_path, environ={"KRONIKA_POSTGRES_HNSW_M": "40"})
    with pytest.raises(ConfigError, match=re.escape(twice)):
        Settings().with_overrides(postgres_hnsw_m=40)
    both = Settings().with_overrides(postgres_hnsw_m=40, postgres_hnsw_ef_construction=80)
    assert (both.postgres_hnsw_m, both.postgres_hnsw_ef_construction) == (40, 80)
    with pytest.raises(ValueError, match="ef_construction must be from 2 \\* m"):
        HnswOptions(m=40)
