"""What a setting's value may be: :func:`coerce` checks and converts one, by name."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kronika.core.adaptive import FUSION_METHODS
from kronika.core.hubness import HUB_SCOPES
from kronika.core.screening import MODES as SECRETS_MODES
from kronika.errors import ConfigError
from kronika.settings.groups import DEFAULTS

MAX_SETTING_NUMBER = 1_000_000_000
"""No numeric setting may pass this (nor be NaN or infinite): larger ones overflow
SQLite integers and time spans instead of meaning anything."""


def coerce(name: str, value: Any) -> Any:
    """``value`` of the setting ``name`` (a flat name) as its type, checked; a
    :class:`~kronika.errors.ConfigError` naming the setting when it is not one."""
    if name in ("agents", "storage", "teams"):
        return value
    if name not in DEFAULTS:
        raise ConfigError(f"unknown setting {name!r}")
    if name == "home":
        return Path(os.path.expanduser(str(value)))
    kind = type(DEFAULTS[name])
    try:
        if kind is bool:
            return str(value).lower() in {"1", "true", "yes", "on"}
        coerced = kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r} expects {kind.__name__}, got {value!r}") from exc
    if name == "autonomy" and coerced not in (0, 1, 2, 3):
        raise ConfigError("setting 'autonomy' must be 0, 1, 2 or 3")
    if name == "secrets" and coerced not in SECRETS_MODES:
        raise ConfigError("setting 'secrets' must be 'redact', 'refuse' or 'allow'")
    if (
        name in ("database_url", "postgres_read_url")
        and coerced
        and not coerced.startswith(("postgresql://", "postgres://"))
    ):
        raise ConfigError(f"setting {name!r} must start with postgresql://")
    if name == "fusion" and coerced not in FUSION_METHODS:
        raise ConfigError(f"setting 'fusion' must be {' or '.join(map(repr, FUSION_METHODS))}")
    if name == "hub_scope" and coerced not in HUB_SCOPES:
        raise ConfigError(f"setting 'hub_scope' must be {' or '.join(map(repr, HUB_SCOPES))}")
    if name == "adaptive_shift" and not 0 <= coerced <= 1:
        raise ConfigError("setting 'adaptive_shift' must be from 0 to 1")
    if name == "llm_json_mode" and coerced not in ("json_object", "none"):
        raise ConfigError("setting 'llm_json_mode' must be 'json_object' or 'none'")
    if name == "reranker_api" and coerced not in ("cohere", "tei"):
        raise ConfigError("setting 'reranker_api' must be 'cohere' or 'tei'")
    if name in ("llm_daily_calls", "llm_daily_tokens", "llm_price_input", "llm_price_output") and (
        coerced < 0
    ):
        raise ConfigError(f"setting {name!r} must not be negative")
    if name == "recency_half_life" and coerced <= 0:
        raise ConfigError("setting 'recency_half_life' must be above 0 (days)")
    if name in ("relevance_floor", "answer_floor"):
        return _floor_setting(name, coerced)
    if name == "decay_half_life_days" and coerced <= 0:
        raise ConfigError("setting 'decay_half_life_days' must be above 0")
    if name == "decay_archive_below" and not 0 <= coerced < 1:
        raise ConfigError("setting 'decay_archive_below' must be from 0 to below 1")
    if name == "reranker_weight" and not 0 <= coerced <= 1:
        raise ConfigError("setting 'reranker_weight' must be from 0 to 1")
    if name == "summarize_at" and not 0 < coerced <= 1:
        raise ConfigError("setting 'summarize_at' must be above 0 and at most 1")
    if name == "near_duplicate_similarity" and not 0 < coerced <= 1:
        raise ConfigError("setting 'near_duplicate_similarity' must be above 0 and at most 1")
    if name in ("l1_every", "l2_every") and coerced < 2:
        raise ConfigError(f"setting {name!r} must be at least 2")
    if name == "postgres_hnsw_m" and not 2 <= coerced <= 100:
        raise ConfigError(f"setting 'postgres_hnsw_m' must be from 2 to 100, got {value!r}")
    if name == "postgres_hnsw_ef_construction" and not 4 <= coerced <= 1000:
        raise ConfigError(
            f"setting 'postgres_hnsw_ef_construction' must be from 4 to 1000, got {value!r}"
        )
    if name == "postgres_hnsw_search_margin" and not 0 <= coerced <= 1000:
        raise ConfigError(
            f"setting 'postgres_hnsw_search_margin' must be from 0 to 1000, got {value!r}"
        )
    if isinstance(coerced, int | float) and coerced < 0:
        raise ConfigError(f"setting {name!r} must not be negative")
    if isinstance(coerced, int | float) and not coerced <= MAX_SETTING_NUMBER:  # NaN too
        raise ConfigError(f"setting {name!r} must be at most {MAX_SETTING_NUMBER}, got {value!r}")
    return coerced


def check_together(value: Callable[[str], Any]) -> None:
    """A :class:`~kronika.errors.ConfigError` when settings that are each right do not go
    together (``value`` gives a setting's value by its flat name)."""
    m, ef = value("postgres_hnsw_m"), value("postgres_hnsw_ef_construction")
    if ef < 2 * m:
        raise ConfigError(
            f"setting 'postgres_hnsw_ef_construction' ({ef}) must be at least twice"
            f" 'postgres_hnsw_m' ({m}): raise it to {2 * m} or more, or lower the m"
        )


CALIBRATED_FLOORS: dict[str, float] = {"use-multilingual": 0.15}
"""``relevance_floor = auto`` per embedder: the cosine about nine in ten unrelated pairs
stay below (docs/benchmarks-ranking.md). Embedders not listed have no floor of their
own (keyword evidence alone would be too strict for them): auto turns it off."""


CALIBRATED_ANSWER_FLOORS: dict[str, float] = {"use-multilingual": 0.25}
"""``answer_floor = auto`` per embedder: the best cosine below which recall answers
nothing, chosen by leave-one-person-out over ``kronika bench memory`` (0.25 in 10 folds
of 12; docs/benchmarks-abstention.md). Not calibrated for the others: auto is off."""


def _floor_setting(name: str, value: str) -> str:
    text = value.strip().lower()
    if text == "auto":
        return text
    try:
        number = float(text)
    except ValueError as exc:
        raise ConfigError(
            f"setting {name!r} must be auto or a number from 0 to below 1, got {value!r}"
        ) from exc
    if not 0 <= number < 1:
        raise ConfigError(f"setting {name!r} must be from 0 (off) to below 1")
    return text


def floor_value(value: str, calibrated: Mapping[str, float], embedder: str) -> float:
    """A floor setting's number: ``value`` itself, or for ``auto`` the value in
    ``calibrated`` for ``embedder`` (0, off, for one not calibrated)."""
    if value == "auto":
        return calibrated.get(embedder, 0.0)
    return float(value)
