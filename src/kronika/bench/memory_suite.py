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
  them) for which recall returned no result. Recall's own relevance floor decides;
  this benchmark applies none of its own.

Rows: every language (its people's questions in that language), cross-lingual (the
questions asked in another language than the memory), every kind, for each split.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

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
from kronika.core.model import RecallResult
from kronika.engine.write import WriteEntityPage, WriteSummary
from kronika.errors import InvalidInput, KronikaError
from kronika.memory import Memory
from kronika.settings import Settings

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
                fields = (("id", f"sum-{handle}"), ("created", when(at).isoformat()))
                path = f"summaries/L1/{handle}.md"
                memory.memory_write(agent, "summaries", WriteSummary(path, text, fields))
                ids[handle] = f"sum-{handle}"
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


def score_question(
    person: Person,
    question: Question,
    ids: dict[str, str],
    result: RecallResult,
    *,
    split: str = "-",
) -> dict[str, Any]:
    """One question's row: where its gold came, and what came first instead."""
    gold = ids[question.gold] if question.gold is not None else None
    ranked = [hit.item.id for hit in result.hits]
    rank = first_rank(gold, ranked)
    top = result.hits[0].item if result.hits else None
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
        "top": None if top is None else {"id": top.id, "type": top.type.value},
        "top_text": None if top is None else top.content[:120],
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
    same = [r for r in rows if r["kind"] != "crosslingual"]
    groups = [("all", rows)]
    groups += [(lang, [r for r in same if r["language"] == lang]) for lang in LANGUAGES]
    groups.append(("cross-lingual", [r for r in rows if r["kind"] == "crosslingual"]))
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
            build_s += time.perf_counter() - began
            began = time.perf_counter()
            for question in person.questions[:limit]:
                result = ask(mem, person, question, k=k)
                rows.append(score_question(person, question, ids, result, split=split_of(person)))
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
        (r["kind"], r["top"]["type"])
        for r in results["questions"]
        if r["gold"] is not None and r["rank"] != 1 and r["top"] is not None
    )
    winners = [[kind, kind_of, str(n)] for (kind, kind_of), n in sorted(missed.items())]
    timing = results["timings"]
    return [
        table(f"Agent memory: recall@{results['k']} by language and kind", columns, rows),
        table(
            "What came first when the gold did not",
            ["kind", "first item's type", "questions"],
            winners,
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
