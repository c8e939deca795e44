"""``kronika bench memory``: recall over memories as an agent keeps them.

Each person of :mod:`kronika.bench.memdata` gets an agent of their own in one fresh
workspace, written through the public :class:`~kronika.Memory` API at the dates the
data gives: keyed facts whose values change (history), dated notes, conversation
turns with the user and the assistant over many sessions (``hi``, ``thanks``, ``ok``
among them), L1 summaries and entity pages (``Memory.memory_write``; an entity page's
bullet carries its date in its metadata comment, as the workspace format allows) and
outcomes with the lessons drawn from them. Each question is then asked of its
person's agent with :meth:`Memory.recall` (hybrid, ``k`` results, ``now`` = the
question's own moment, ``record_access=False``) under the settings given (the
defaults unless changed), and scored against its one gold item:

* **hit@1**, **hit@3**, **MRR** over answerable questions (MRR counts within ``k``);
* **empty**: the share of answerable questions recall answered with no result at all;
* **no-answer precision**: the share of ``none`` questions (nothing stored answers
  them) for which recall returned no result. Recall's own floors decide (the answer
  floor and the relevance floor); this benchmark applies none of its own.

Rows: every language (its people's questions asked in that language), cross-lingual
(the questions asked in another language than the memory: the ``crosslingual`` kind and
``none`` questions asked so), every kind, for each split.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from kronika import (
    InvalidInput,
    ItemType,
    KronikaError,
    Layer,
    Memory,
    MemoryItem,
    RecallResult,
    RetainKind,
    Settings,
    WriteEntityPage,
    WriteSummary,
)
from kronika.bench._runtime import Progress, bench_memory, embedder_id, settings_summary
from kronika.bench.memdata import LANGUAGES, Split, people, split_of
from kronika.bench.memdata.model import (
    EntityPage,
    Fact,
    Note,
    Outcome,
    Person,
    Question,
    Session,
    Summary,
    parse_turn,
    when,
)
from kronika.bench.metrics import answer_scores, first_rank, mean
from kronika.bench.report import table

K = 10
"""Results asked for per question."""


class DatasetError(KronikaError):
    """A handle of the data that does not resolve to exactly one stored item."""


def build_person(memory: Memory, person: Person) -> dict[str, str]:
    """Write ``person``'s memories into the agent ``person.pid``; returns handle → item id.

    Every handle is checked to name exactly one item of the agent once it is written
    (:class:`DatasetError` otherwise)."""
    agent = person.pid
    memory.create_agent(agent)
    ids: dict[str, str] = {}
    turns: dict[str, str] = {}  # handle -> turn id
    pages: dict[str, str] = {}  # handle -> page path
    for item in person.items:
        match item:
            case Fact(handle, at, key, value):
                receipt = memory.remember(key=key, value=value, agent=agent, at=when(at))
                ids[handle] = _applied(receipt.item, handle).id
            case Note(handle, at, text, kind):
                receipt = memory.note(text, agent=agent, at=when(at), kind=kind)
                ids[handle] = _applied(receipt.item, handle).id
            case Session(sid, at, rows):
                start = when(at)
                for n, row in enumerate(rows):
                    speaker, named, said = parse_turn(row)
                    moment = start + timedelta(minutes=n)
                    turn = memory.save_turn(sid, speaker, said, agent=agent, at=moment)
                    if named:
                        turns[named] = turn
            case Summary(handle, at, text):
                # a summary's id is the one its header names: it must be unique in the
                # workspace, not only in its agent (another agent's would take its place)
                summary_id = f"sum-{agent}-{handle}"
                fields = (("id", summary_id), ("created", when(at).isoformat()))
                path = f"summaries/L1/{handle}.md"
                memory.memory_write(agent, "summaries", WriteSummary(path, text, fields))
                ids[handle] = summary_id
            case EntityPage(handle, at, name, text):
                path = f"bank/entities/{name}.md"
                stamp = when(at).strftime("%Y-%m-%dT%H:%M:%SZ")
                page = f"# {name}\n\n- {text} <!-- created={stamp} -->\n"
                memory.memory_write(agent, "bank", WriteEntityPage(path, page))
                pages[handle] = path
            case Outcome(at, task, action, ok, reasons):
                memory.record_outcome(
                    task, action, ok=ok, reasons=reasons, agent=agent, at=when(at)
                )
    stored = memory.items(agent=agent, include_superseded=True, limit=1_000_000)
    for handle, turn_id in turns.items():
        ids[handle] = _one(handle, [it.id for it in stored if turn_id in it.provenance.turn_ids])
    for handle, path in pages.items():
        ids[handle] = _one(handle, [it.id for it in stored if it.provenance.path == path])
    known = Counter(it.id for it in stored)
    for handle, item_id in ids.items():
        if known[item_id] != 1:
            raise DatasetError(f"{person.pid}: {handle!r} is stored {known[item_id]} times")
    return ids


def _applied(item: Any, handle: str) -> Any:
    if item is None:
        raise DatasetError(f"{handle!r} was not written")
    return item


def _one(handle: str, found: Sequence[str]) -> str:
    if len(found) != 1:
        raise DatasetError(f"{handle!r} resolves to {len(found)} stored items")
    return found[0]


def ask(memory: Memory, person: Person, question: Question, *, k: int = K) -> RecallResult:
    """The recall an agent would run for ``question``, at the question's own moment."""
    return memory.recall(
        question.text,
        agent=person.pid,
        k=k,
        now=when(question.now or person.today),
        record_access=False,
    )


WINNERS = (
    "current value",
    "other key",
    "phatic turn",
    "other turn",
    "lesson",
    "outcome",
    "entity page",
    "summary",
    "note",
)


def winner(top: MemoryItem, gold: MemoryItem | None) -> str:
    """What kind of item came first instead of the gold (or for a ``none`` question):

    ``current value`` (the key's value now, asked about another time), ``other key``
    (a fact keyed otherwise), ``phatic turn`` (a turn of three words or fewer: "hi",
    "ok thanks"), ``other turn``, ``lesson`` (a reflection or strategy), ``outcome``
    (the note of a recorded outcome), ``entity page``, ``summary``, ``note``."""
    path = top.provenance.path
    if top.key is not None:
        same = gold is not None and gold.key is not None
        return "current value" if same and gold is not None and gold.key == top.key else "other key"
    if top.type is ItemType.MESSAGE:
        return "phatic turn" if len(top.content.split()) <= 3 else "other turn"
    if top.layer is Layer.REFLECTIVE:
        return "lesson"
    if top.kind is RetainKind.EXPERIENCE:
        return "outcome"
    if path.startswith("bank/entities/"):
        return "entity page"
    if top.type in (ItemType.EPISODIC, ItemType.SUMMARY):
        return "summary"
    return "note"


def score_question(
    person: Person,
    question: Question,
    ids: dict[str, str],
    result: RecallResult,
    *,
    split: str = "-",
    stored: dict[str, MemoryItem] | None = None,
) -> dict[str, Any]:
    """One question's row: where its gold came, and what came first instead (``stored``:
    the person's items by id, to tell what the first item was against the gold)."""
    gold = ids[question.gold] if question.gold is not None else None
    ranked = [hit.item.id for hit in result.hits]
    rank = first_rank(gold, ranked)
    top = result.hits[0].item if result.hits else None
    gold_item = (stored or {}).get(gold) if gold is not None else None
    row: dict[str, Any] = {
        "qid": question.qid,
        "person": person.pid,
        "language": person.lang,
        "question_language": question.lang,
        "split": split,
        "kind": question.kind,
        "question": question.text,
        "gold": question.gold,
        "gold_id": gold,
        "rank": rank,
        "returned": len(ranked),
        "top": None
        if top is None
        else {"id": top.id, "type": top.type.value, "key": top.key, "is": winner(top, gold_item)},
        "top_text": None if top is None else top.content[:120],
        "returned_kinds": dict(Counter(winner(hit.item, gold_item) for hit in result.hits)),
    }
    if gold is not None:
        row.update(answer_scores(rank, len(ranked)))
    else:
        row["no_answer"] = float(not ranked)
    return row


def aggregate(rows: Iterable[dict[str, Any]]) -> dict[str, float]:
    """hit@1, hit@3, MRR and the empty share over the answerable rows; no-answer
    precision over the ``none`` rows; and both counts."""
    rows = list(rows)
    answerable = [r for r in rows if r["gold"] is not None]
    unanswerable = [r for r in rows if r["gold"] is None]
    out = {key: mean(r[key] for r in answerable) for key in ("hit@1", "hit@3", "mrr", "empty")}
    out["no_answer_precision"] = mean(r["no_answer"] for r in unanswerable)
    out["answerable"] = float(len(answerable))
    out["none"] = float(len(unanswerable))
    return out


def _groups(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    same = [r for r in rows if r["question_language"] == r["language"]]
    groups = [("all", rows)]
    groups += [(lang, [r for r in same if r["language"] == lang]) for lang in LANGUAGES]
    groups.append(("cross-lingual", [r for r in rows if r["question_language"] != r["language"]]))
    kinds = dict.fromkeys(r["kind"] for r in rows)
    groups += [(f"kind {kind}", [r for r in rows if r["kind"] == kind]) for kind in kinds]
    return [(label, chosen) for label, chosen in groups if chosen]


def run_memory(
    *,
    split: Split = "all",
    settings: Settings | None = None,
    k: int = K,
    only: Sequence[str] = (),
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build every person of ``split`` (or of ``only``, by id) and ask their questions
    (the first ``limit`` of each person, when given); returns the JSON-ready results."""
    chosen = [p for p in people(split) if not only or p.pid in only]
    if only and len(chosen) != len(set(only)):
        missing = sorted(set(only) - {p.pid for p in chosen})
        raise InvalidInput(f"no such person in split {split}: {', '.join(missing)}")
    rows: list[dict[str, Any]] = []
    build_s = ask_s = 0.0
    with bench_memory(settings, workdir=None, memory=None) as (mem, used):
        assert isinstance(mem, Memory)
        for n, person in enumerate(chosen):
            if progress:
                progress(person.pid, n, len(chosen))
            began = time.perf_counter()
            ids = build_person(mem, person)
            every = mem.items(agent=person.pid, include_superseded=True, limit=1_000_000)
            stored = {item.id: item for item in every}
            build_s += time.perf_counter() - began
            began = time.perf_counter()
            for question in person.questions[:limit]:
                result = ask(mem, person, question, k=k)
                rows.append(
                    score_question(
                        person, question, ids, result, split=split_of(person), stored=stored
                    )
                )
            ask_s += time.perf_counter() - began
        if progress:
            progress("done", len(chosen), len(chosen))
        model = embedder_id(mem)
    splits = ["dev", "test"] if split == "all" else [split]
    scores = {
        s: {
            label: aggregate(group)
            for label, group in _groups([r for r in rows if r["split"] == s])
        }
        for s in splits
    }
    if split == "all":
        scores["all"] = {label: aggregate(group) for label, group in _groups(rows)}
    results: dict[str, Any] = {
        "benchmark": "memory",
        "dataset": "kronika.bench.memdata",
        "split": split,
        "k": k,
        "people": [p.pid for p in chosen],
        "embedder": model,
        "settings": settings_summary(used),
        "scores": scores,
        "questions": rows,
        "timings": {"build_s": build_s, "ask_s": ask_s, "questions": len(rows)},
    }
    results["headline"] = _headline(scores[split])
    results["tables"] = _tables(results)
    return results


def _headline(block: dict[str, dict[str, float]]) -> dict[str, float]:
    flat: dict[str, float] = {}
    for label, row in block.items():
        prefix = "" if label == "all" else f"{label.replace(' ', '_')}."
        keys = ("hit@1", "hit@3", "mrr", "empty") if row["answerable"] else ()
        for key in (*keys, "no_answer_precision") if row["none"] else keys:
            flat[f"{prefix}{key}"] = row[key]
    return flat


METRIC_COLUMNS = ("hit@1", "hit@3", "mrr", "empty", "no_answer_precision")


def _tables(results: dict[str, Any]) -> list[dict[str, Any]]:
    columns = ["split", "row", "answerable", "hit@1", "hit@3", "MRR", "empty", "none", "no-answer"]
    rows = [
        [
            split,
            label,
            str(int(row["answerable"])),
            *(f"{row[key]:.3f}" if row["answerable"] else "-" for key in METRIC_COLUMNS[:4]),
            str(int(row["none"])),
            f"{row['no_answer_precision']:.3f}" if row["none"] else "-",
        ]
        for split, block in results["scores"].items()
        for label, row in block.items()
    ]
    missed = Counter(
        (r["kind"], r["top"]["is"])
        for r in results["questions"]
        if r["rank"] != 1 and r["top"] is not None
    )
    kinds = list(dict.fromkeys(r["kind"] for r in results["questions"]))
    seen = [w for w in WINNERS if any(w == kind_of for _, kind_of in missed)]
    winners = [
        [
            kind,
            str(sum(missed[(kind, w)] for w in WINNERS)),
            *(str(missed[(kind, w)]) for w in seen),
        ]
        for kind in kinds
    ]
    served = []
    for kind in kinds:
        mine = [r for r in results["questions"] if r["kind"] == kind]
        share = {
            w: sum(1 for r in mine if r["returned_kinds"].get(w)) / len(mine)
            for w in ("lesson", "outcome", "phatic turn")
        }
        served.append(
            [
                kind,
                str(len(mine)),
                f"{mean(r['returned'] for r in mine):.1f}",
                *(f"{share[w]:.3f}" for w in ("lesson", "outcome", "phatic turn")),
            ]
        )
    timing = results["timings"]
    return [
        table(f"Agent memory: recall@{results['k']} by language and kind", columns, rows),
        table(
            "What came first instead of the gold (for none: whatever came first)",
            ["kind", "questions", *seen],
            winners,
        ),
        table(
            "Among the results: how many, and the share of questions served a lesson, an"
            " outcome or a phatic turn",
            ["kind", "questions", "results", "lesson", "outcome", "phatic turn"],
            served,
        ),
        table(
            "Agent memory: time",
            ["people", "questions", "build s", "ask s"],
            [
                [
                    str(len(results["people"])),
                    str(timing["questions"]),
                    f"{timing['build_s']:.1f}",
                    f"{timing['ask_s']:.1f}",
                ]
            ],
        ),
    ]
