"""Every public result put into JSON by :mod:`kronika.wire`, sent as JSON text and read
back by its ``*_from_json`` function, is the result it was (what stays on the server,
a receipt's ``paths`` and a forget's ``phrases``, is generated empty); and the JSON is
what the REST API's answer models accept."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kronika import wire
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallHit,
    RecallResult,
    RetainKind,
    Scope,
    ScoreParts,
    Source,
    Status,
    Tier,
)
from kronika.engine.changes import (
    AddFact,
    AppendNote,
    ArchiveFacts,
    ForgetItems,
    RemoveItem,
    SupersedeFact,
    TouchFact,
)
from kronika.engine.forgetting import ForgetReceipt
from kronika.engine.proposals import Proposal
from kronika.engine.redacting import ForgetPlace
from kronika.engine.write import SavedTurn, WriteReceipt
from kronika.ports import AuditEntry

text = st.text(max_size=40)
some_text = st.text(min_size=1, max_size=20)
maybe_text = st.none() | some_text
zones = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=10))]
)
moments = st.builds(
    lambda base, us, zone: (base + timedelta(microseconds=us)).astimezone(zone),
    st.just(datetime(2000, 1, 1, tzinfo=UTC)),
    st.integers(0, 10**15),
    zones,
)
numbers = st.floats(0, 1, allow_nan=False) | st.integers(0, 1)
scores = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
words = st.lists(some_text, max_size=3).map(tuple)

items = st.builds(
    MemoryItem,
    id=some_text,
    agent=some_text,
    content=text,
    type=st.sampled_from(list(ItemType)),
    layer=st.sampled_from(list(Layer)),
    tier=st.sampled_from(list(Tier)),
    created_at=moments,
    updated_at=moments,
    provenance=st.builds(
        Provenance, some_text, st.none() | st.integers(1, 10**6), maybe_text, words
    ),
    tenant=some_text,
    scope=st.sampled_from(list(Scope)),
    channel=maybe_text,
    user=maybe_text,
    team=maybe_text,
    key=maybe_text,
    value=maybe_text,
    multi=st.booleans(),
    source=st.sampled_from(list(Source)),
    section=maybe_text,
    kind=st.none() | st.sampled_from(list(RetainKind)),
    confidence=st.none() | numbers,
    importance=numbers,
    status=st.sampled_from(list(Status)),
    valid_from=st.none() | moments,
    valid_to=st.none() | moments,
    superseded_by=maybe_text,
    speaker=maybe_text,
    entities=words,
    tags=words,
    last_accessed_at=st.none() | moments,
    access_count=st.integers(0, 10**9),
)
changes = st.one_of(
    st.builds(AddFact, items),
    st.builds(TouchFact, items),
    st.builds(SupersedeFact, some_text, items),
    st.builds(AppendNote, items),
    st.builds(RemoveItem, items),
    st.builds(ArchiveFacts, words),
    st.builds(ForgetItems, st.lists(items, max_size=2).map(tuple), st.just(())),
)
outcomes = st.sampled_from(["applied", "proposed", "refused"])
write_receipts = st.builds(
    WriteReceipt,
    outcome=outcomes,
    change=changes,
    item=st.none() | items,
    paths=st.just(()),
    proposal=maybe_text,
    notes=words,
    policy=maybe_text,
)
forget_receipts = st.builds(
    ForgetReceipt,
    outcome=st.sampled_from(["applied", "proposed", "preview"]),
    agent=some_text,
    items=st.lists(items, max_size=2).map(tuple),
    places=st.lists(
        st.builds(ForgetPlace, some_text, some_text, st.integers(0, 99), st.integers(0, 99)),
        max_size=3,
    ).map(tuple),
    phrases=st.just(()),
    index_removed=st.integers(0, 99),
    index_rewritten=st.integers(0, 99),
    audit_redacted=st.integers(0, 99),
    proposal=maybe_text,
)
score_parts = st.builds(
    ScoreParts,
    relevance=scores,
    importance=scores,
    recency=scores,
    total=scores,
    lexical_rank=st.none() | st.integers(1, 1000),
    vector_similarity=st.none() | scores,
    rerank_score=st.none() | scores,
    history=maybe_text,
)
hits = st.builds(RecallHit, items, score_parts, st.integers(0, 10**6))
recalls = st.builds(
    RecallResult,
    query=text,
    hits=st.lists(hits, max_size=3).map(tuple),
    total_tokens=st.integers(0, 10**6),
    budget_tokens=st.none() | st.integers(1, 10**6),
    candidates=st.integers(0, 10**6),
    dropped_for_budget=st.integers(0, 99),
    notes=words,
)
proposals = st.builds(
    Proposal,
    id=some_text,
    agent=some_text,
    source_agent=some_text,
    created_at=moments,
    section=text,
    summary=text,
    change=changes,
    status=st.sampled_from(["pending", "approved", "rejected"]),
)
audit_entries = st.builds(
    AuditEntry,
    at=moments,
    action=some_text,
    target_agent=some_text,
    source_agent=some_text,
    section=text,
    item_id=maybe_text,
    summary=text,
    outcome=some_text,
    api_key=maybe_text,
    user=maybe_text,
)


def sent(data: Any) -> Any:
    """``data`` as a client receives it: JSON text, parsed."""
    return json.loads(json.dumps(data, ensure_ascii=False))


CASES: dict[str, tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]] = {
    "item": (items, wire.item, wire.item_from_json),
    "write receipt": (write_receipts, wire.write_receipt, wire.write_receipt_from_json),
    "forget receipt": (forget_receipts, wire.forget_receipt, wire.forget_receipt_from_json),
    "hit": (hits, lambda h: wire.hit(h, explain=True), wire.hit_from_json),
    "recall": (recalls, lambda r: wire.recall(r, explain=True), wire.recall_from_json),
    "proposal": (proposals, wire.proposal, wire.proposal_from_json),
    "audit entry": (audit_entries, wire.audit_entry, wire.audit_entry_from_json),
    "change": (changes, wire.change, wire.change_from_json),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_result_read_back_from_its_json_is_the_result(name: str) -> None:
    strategy, to_json, from_json = CASES[name]

    @given(strategy)
    @settings(max_examples=60, deadline=None)
    def check(found: Any) -> None:
        assert from_json(sent(to_json(found))) == found

    check()


@given(st.lists(items, max_size=3), st.lists(audit_entries, max_size=3))
@settings(max_examples=30, deadline=None)
def test_lists_read_back_whole(listed: list[MemoryItem], entries: list[AuditEntry]) -> None:
    assert wire.items_from_json(sent(wire.items(listed))) == listed
    assert wire.audit_from_json(sent(wire.audit(entries))) == entries


@given(some_text, outcomes, maybe_text, maybe_text)
@settings(max_examples=30, deadline=None)
def test_a_saved_turn_reads_back_with_its_outcome(
    turn_id: str, outcome: str, proposal: str | None, policy: str | None
) -> None:
    made = SavedTurn(turn_id, outcome, proposal, policy)
    back = wire.turn_receipt_from_json(sent(wire.turn_receipt("s-1", made)))
    assert (str(back), back.outcome, back.proposal, back.policy) == (
        turn_id,
        outcome,
        proposal,
        policy,
    )


def test_a_hit_without_its_score_parts_is_refused_not_guessed() -> None:
    found = RecallHit(
        MemoryItem(
            "i-1",
            "a",
            "tea",
            ItemType.FACT,
            Layer.LONG_TERM,
            Tier.LONG,
            datetime(2025, 1, 1, tzinfo=UTC),
            datetime(2025, 1, 1, tzinfo=UTC),
            Provenance("brain.md", 3),
        ),
        ScoreParts(0.5, 0.5, 0.5, 0.4),
        3,
    )
    with pytest.raises(ValueError, match="explain"):
        wire.hit_from_json(sent(wire.hit(found)))


@pytest.mark.parametrize("name", sorted(set(CASES) - {"change"}))
def test_the_json_is_what_the_rest_api_s_answer_models_accept(name: str) -> None:
    pytest.importorskip("fastapi", reason="the [server] extra is not installed")
    from kronika.server import responses

    model: Any = {
        "item": responses.Item,
        "write receipt": responses.WriteReceipt,
        "forget receipt": responses.ForgetReceipt,
        "hit": responses.Hit,
        "recall": responses.Recall,
        "proposal": responses.Proposal,
        "audit entry": responses.AuditEntry,
    }[name]
    strategy, to_json, _ = CASES[name]

    @given(strategy)
    @settings(max_examples=20, deadline=None)
    def check(found: Any) -> None:
        data = sent(to_json(found))
        assert model.model_validate(data).model_dump(by_alias=True, exclude_unset=True) == data

    check()
