"""Conversation turns are recalled with the turns around them (neighbour context)."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory
from kronika.core.model import RecallFilter
from kronika.settings import Settings
from kronika.testing import FrozenClock, conversation

BIRTHDAY = conversation(
    "conv-s1",
    datetime(2023, 8, 14, 19, 0, tzinfo=UTC),
    [
        ("D1:1", "Melanie", "We celebrated my daughter's birthday with a concert last night."),
        ("D1:2", "Caroline", "Wow! Which band played the birthday concert?"),
        ("D1:3", "Melanie", "It was Matt Patterson, he is so talented!"),
        ("D1:4", "Caroline", "Lucky kids. I spent the weekend repainting my kitchen."),
        ("D1:5", "Melanie", "Blue walls would suit it."),
    ],
)
OTHER = conversation(
    "conv-s2",
    datetime(2023, 9, 1, 10, 0, tzinfo=UTC),
    [("D2:1", "Caroline", "Thanks a lot, Mel."), ("D2:2", "Melanie", "Anytime!")],
)
QUESTION = "Who performed at the concert for Melanie's daughter's birthday?"
NOW = datetime(2023, 9, 2, tzinfo=UTC)


def _turns(mem: Memory, **kwargs: object) -> list[str]:
    result = mem.recall(QUESTION, agent="conv", k=10, now=NOW, record_access=False, **kwargs)  # type: ignore[arg-type]
    return [t for hit in result.hits for t in hit.item.provenance.turn_ids]


def _first_turn(mem: Memory, question: str, *, agent: str, now: datetime) -> str:
    """The turn id of the best hit."""
    hits = mem.recall(question, agent=agent, k=3, now=now, record_access=False).hits
    return hits[0].item.provenance.turn_ids[0]


def _memory(settings: Settings, clock: FrozenClock, **overrides: object) -> Memory:
    mem = build_memory(settings.with_overrides(**overrides), create=True, clock=clock)
    mem.import_sessions("conv", [BIRTHDAY, OTHER])
    return mem


def test_a_reply_is_recalled_through_the_question_it_answers(
    settings: Settings, clock: FrozenClock
) -> None:
    with _memory(settings, clock, neighbour_weight=0.0) as mem:
        alone = _turns(mem, mode="lexical")
    with _memory(settings, clock) as mem:
        with_context = _turns(mem, mode="lexical")
    # the answer shares no word with the question (who said it is no word of it)
    assert "D1:3" not in alone[:3]
    assert set(with_context[:3]) == {"D1:1", "D1:2", "D1:3"}


def test_neighbours_respect_the_filter(settings: Settings, clock: FrozenClock) -> None:
    with _memory(settings, clock) as mem:
        only_caroline = _turns(mem, mode="lexical", speakers=["Caroline"])
    assert only_caroline and set(only_caroline) <= {"D1:2", "D1:4", "D2:1"}


def test_neighbours_are_the_other_party_in_the_same_session_and_window(
    settings: Settings, clock: FrozenClock
) -> None:
    with _memory(settings, clock) as mem:
        ids = {t: item.id for item in mem.items(agent="conv") for t in item.provenance.turn_ids}
        turn_of = {v: k for k, v in ids.items()}
        everything = RecallFilter(agents=("conv",))

        def around(turn: str, window: int = 2, flt: RecallFilter = everything) -> list[str]:
            found = mem.index.neighbours([ids[turn]], flt, window)
            return [f"{turn_of[n]}@{offset}" for n, offset in found.get(ids[turn], [])]

        # the exchange: the other party's turns, never the speaker's own
        assert around("D1:3") == ["D1:2@-1", "D1:4@1"]
        assert around("D1:2", window=1) == ["D1:1@-1", "D1:3@1"]
        assert around("D1:5") == ["D1:4@-1"]  # D2:1 is another session
        assert around("D2:1", window=1) == ["D2:2@1"]
        melanie = RecallFilter(agents=("conv",), speakers=("Melanie",))
        assert around("D1:3", flt=melanie) == []  # Caroline's turns do not pass the filter
        assert around("D1:2", flt=melanie) == ["D1:1@-1", "D1:3@1"]
        assert around("D1:3", window=0) == []


def test_a_query_naming_one_speaker_prefers_their_own_turns(
    settings: Settings, clock: FrozenClock
) -> None:
    question = "What did Caroline say about the birthday concert?"

    def ranked(mem: Memory) -> dict[str, float]:
        hits = mem.recall(question, agent="conv", k=3, now=NOW, record_access=False).hits
        return {hit.item.provenance.turn_ids[0]: hit.score.relevance for hit in hits}

    plain = {"neighbour_weight": 0.0, "answer_focus": 0.0, "embed_context_words": 0}
    plain |= {"session_weight": 0.2}  # the pull this test was written at
    with _memory(settings, clock, speaker_focus=0.0, **plain) as mem:
        alike = ranked(mem)
        assert list(alike) == ["D1:2", "D1:1", "D1:4"]  # Melanie's D1:1 repeats the words
    with _memory(settings, clock, speaker_focus=3.0, **plain) as mem:
        focused = ranked(mem)
    # Caroline's own turn first; Melanie's counts a quarter (then moves towards the best
    # turn of its session); Caroline's D1:4, which says nothing of the concert, is not
    # lifted by her name: who said a turn is no word of it
    assert list(focused)[0] == "D1:2"
    assert focused["D1:1"] < alike["D1:1"] / 2
    assert focused["D1:4"] == pytest.approx(alike["D1:4"])


PETS = conversation(
    "pets-1",
    datetime(2023, 6, 2, 18, 0, tzinfo=UTC),
    [
        ("Q1:1", "Caroline", "Pets are such a joy. What pets do you have, Melanie?"),
        ("Q1:2", "Melanie", "We've got a pup and a kitty, Luna and Oliver."),
        ("Q1:3", "Caroline", "Adorable! I'm off to the pet shop for Oscar's hay."),
        ("Q1:4", "Melanie", "Say hi to him!"),
    ],
)
ASKING_ALONE = conversation(
    "asking-1",
    datetime(2023, 6, 3, 9, 0, tzinfo=UTC),
    [("A1:1", "Melanie", "What pets would suit a small flat?")],
)


@pytest.mark.parametrize(("focus", "first"), [(0.0, "Q1:1"), (1.5, "Q1:2")])
def test_the_answer_counts_more_than_the_question_it_answers(
    settings: Settings, clock: FrozenClock, focus: float, first: str
) -> None:
    # the speaker focus off: Melanie is named, and her own turn would lead for that alone
    with _memory(settings, clock, answer_focus=focus, speaker_focus=0.0) as mem:
        mem.import_sessions("conv", [PETS])
        assert _first_turn(mem, "What pets does Melanie have?", agent="conv", now=NOW) == first


SHOES = conversation(
    "chat-1",
    datetime(2023, 6, 4, 9, 0, tzinfo=UTC),
    [
        ("C1:1", "user", "Can you suggest running shoes like my favourite Nike Pegasus?"),
        ("C1:2", "assistant", "Sure! Try the Brooks Ghost or the Asics Novablast."),
    ],
)


def test_a_question_to_the_assistant_keeps_its_relevance(
    settings: Settings, clock: FrozenClock
) -> None:
    # the assistant's answer tells what it knows; the user's question is the record of
    # the user ("my favourite Nike Pegasus")
    def first(focus: float) -> tuple[str, float]:
        with _memory(settings, clock, answer_focus=focus) as mem:
            mem.import_sessions("conv", [SHOES])
            hit = mem.recall(
                "What are my favourite running shoes?",
                agent="conv",
                k=1,
                now=NOW,
                record_access=False,
            ).hits[0]
        return hit.item.provenance.turn_ids[0], hit.score.relevance

    assert first(1.5) == first(0.0)
    assert first(1.5)[0] == "C1:1"


SERIES = [
    conversation(
        f"ask-{lang}",
        datetime(2023, 6, 4, 9, 0, tzinfo=UTC),
        [(f"{lang}:1", "user", asked), (f"{lang}:2", "assistant", reply)],
    )
    for lang, asked, reply in [
        ("pl", "poleć mi jakiś serial kryminalny", "Polecam „Rojst”, mroczny kryminał."),
        ("es", "¿me recomiendas una serie policiaca?", "Te recomiendo «La casa de papel»."),
        ("uk", "порадь якийсь детективний серіал", "Раджу «Шерлок», класика жанру."),
        ("en", "can you suggest a crime series?", "How about Broadchurch? It is gripping."),
    ]
]
ASKED_OF_THE_ASSISTANT = {
    "pl": "Jaki serial kryminalny polecił asystent?",
    "es": "¿Qué serie policiaca me recomendó el asistente?",
    "uk": "Який детективний серіал порадив асистент?",
    "en": "Which crime series did the assistant suggest?",
}


@pytest.mark.parametrize("lang", sorted(ASKED_OF_THE_ASSISTANT))
def test_a_question_about_what_the_assistant_said_is_answered_by_its_reply(
    settings: Settings, clock: FrozenClock, lang: str
) -> None:
    # the request shares the question's words, the reply none of them; named by its role
    # in the question's language, the assistant's reply is the answer and the request,
    # question mark or not, only asks
    session = next(s for s in SERIES if s.session_id == f"ask-{lang}")
    with _memory(settings, clock) as mem:
        mem.import_sessions("chat", [session])
        first = _first_turn(mem, ASKED_OF_THE_ASSISTANT[lang], agent="chat", now=NOW)
    assert first == f"{lang}:2"


def test_a_question_nobody_answered_keeps_its_relevance(
    settings: Settings, clock: FrozenClock
) -> None:
    # only the user's side kept, or the last word of a chat: no reply to hand over to
    def score(focus: float) -> float:
        with _memory(settings, clock, answer_focus=focus) as mem:
            mem.import_sessions("conv", [ASKING_ALONE])
            hits = mem.recall(
                "Which pets suit a small flat?", agent="conv", k=1, now=NOW, record_access=False
            ).hits
        assert hits[0].item.provenance.turn_ids == ("A1:1",)
        return hits[0].score.relevance

    assert score(1.5) == score(0.0)


PAINTINGS = [
    conversation(f"paint-{n}", when, [(f"P{n}:1", "Caroline", text)])
    for n, when, text in [
        (1, datetime(2023, 8, 3, 18, 0, tzinfo=UTC), "I painted a sunset over the lake."),
        (
            2,
            datetime(2023, 10, 13, 18, 0, tzinfo=UTC),
            "I painted my dog, it came out great.",
        ),
        (3, datetime(2023, 12, 20, 18, 0, tzinfo=UTC), "Finally painted the kitchen walls."),
    ]
]


def test_a_query_naming_a_month_prefers_what_was_said_then(
    settings: Settings, clock: FrozenClock
) -> None:
    def first(mem: Memory, question: str) -> str:
        return _first_turn(mem, question, agent="art", now=datetime(2024, 1, 10, tzinfo=UTC))

    with _memory(settings, clock, time_focus=0.0) as mem:
        mem.import_sessions("art", [*PAINTINGS, BIRTHDAY, OTHER])
        # on words alone the October turn is not first
        assert first(mem, "What did Caroline paint in October 2023?") != "P2:1"
    with _memory(settings, clock, time_focus=2.0) as mem:
        mem.import_sessions("art", [*PAINTINGS, BIRTHDAY, OTHER])
        assert first(mem, "What did Caroline paint in October 2023?") == "P2:1"
        assert first(mem, "Co Caroline painted w październiku 2023?") == "P2:1"
        assert first(mem, "What did Caroline paint on 13 October?") == "P2:1"
        # the kitchen was mentioned on 20 December: a question about November still
        # prefers it (told soon after) to the sunset of August
        assert first(mem, "What did Caroline paint in November 2023?") == "P3:1"
        assert first(mem, "What did Caroline paint in August 2023?") == "P1:1"


def test_a_query_pointing_back_from_now_prefers_what_was_said_then(
    settings: Settings, clock: FrozenClock
) -> None:
    """ "Two weeks ago", "last month" are counted back from when the question is asked."""

    def first(mem: Memory, question: str, now: datetime) -> str:
        return _first_turn(mem, question, agent="art", now=now)

    october_27 = datetime(2023, 10, 27, 9, 0, tzinfo=UTC)  # two weeks after the dog
    january_3 = datetime(2024, 1, 3, 9, 0, tzinfo=UTC)  # two weeks after the kitchen
    with _memory(settings, clock, time_focus=0.0) as mem:
        mem.import_sessions("art", [*PAINTINGS, BIRTHDAY, OTHER])
        firsts = {
            first(mem, "What did Caroline paint two weeks ago?", t) for t in (october_27, january_3)
        }
        assert len(firsts) == 1  # on words alone the moment of asking changes nothing
    with _memory(settings, clock, time_focus=2.0) as mem:
        mem.import_sessions("art", [*PAINTINGS, BIRTHDAY, OTHER])
        assert first(mem, "What did Caroline paint two weeks ago?", october_27) == "P2:1"
        assert first(mem, "What did Caroline paint two weeks ago?", january_3) == "P3:1"
        assert first(mem, "Co Caroline painted dwa tygodnie temu?", january_3) == "P3:1"
        assert first(mem, "What did Caroline paint last month?", january_3) == "P3:1"


def test_a_query_naming_yesterday_or_today_prefers_what_was_said_then(
    settings: Settings, clock: FrozenClock
) -> None:
    """ "Yesterday", "wczoraj", "ayer", "вчора", "today" name a day counted from when
    the question is asked: the day of the dog (13 October) read the day after, and the
    day of the kitchen (20 December) read the day after and on the day."""

    def first(mem: Memory, question: str, now: datetime) -> str:
        return _first_turn(mem, question, agent="art", now=now)

    after_dog = datetime(2023, 10, 14, 9, 0, tzinfo=UTC)
    after_kitchen = datetime(2023, 12, 21, 9, 0, tzinfo=UTC)
    that_evening = datetime(2023, 12, 20, 21, 0, tzinfo=UTC)
    with _memory(settings, clock, time_focus=2.0) as mem:
        mem.import_sessions("art", [*PAINTINGS, BIRTHDAY, OTHER])
        assert first(mem, "What did Caroline paint yesterday?", after_dog) == "P2:1"
        assert first(mem, "What did Caroline paint yesterday?", after_kitchen) == "P3:1"
        assert first(mem, "Co Caroline painted wczoraj?", after_kitchen) == "P3:1"
        assert first(mem, "¿Qué painted Caroline ayer?", after_dog) == "P2:1"
        assert first(mem, "Що Caroline painted вчора?", after_dog) == "P2:1"
        assert first(mem, "What did Caroline paint today?", that_evening) == "P3:1"


SUPPORT = conversation(
    "support-1",
    datetime(2023, 5, 8, 13, 0, tzinfo=UTC),
    [
        ("S1:1", "Caroline", "The LGBTQ support group is such a warm place."),
        ("S1:2", "Melanie", "How did it go?"),
        ("S1:3", "Caroline", "I went to the support group yesterday and it was powerful."),
        ("S1:4", "Melanie", "So proud of you!"),
    ],
)


def test_a_question_asking_when_prefers_what_says_when(
    settings: Settings, clock: FrozenClock
) -> None:
    def first(mem: Memory, question: str) -> str:
        return _first_turn(mem, question, agent="conv", now=NOW)

    question = "When did Caroline go to the LGBTQ support group?"
    plain = {"neighbour_weight": 0.0, "embed_context_words": 0}  # each turn on its own
    with _memory(settings, clock, when_focus=0.0, **plain) as mem:
        mem.import_sessions("conv", [SUPPORT])
        assert first(mem, question) == "S1:1"  # more of the question's words
    with _memory(settings, clock, **plain) as mem:  # when_focus 1.0
        mem.import_sessions("conv", [SUPPORT])
        assert first(mem, question) == "S1:3"  # says when: "yesterday"
        assert first(mem, "Kiedy Caroline poszła na LGBTQ support group?") == "S1:3"
        # a question not asking when is left alone
        assert first(mem, "What did Caroline think of the LGBTQ support group?") == "S1:1"


WEEK = conversation(
    "me-s1",
    datetime(2024, 3, 4, 9, 0, tzinfo=UTC),
    [
        ("W1", "user", "How many times do I have to ask? Do it now, and do it in a way I like."),
        ("W2", "user", "My fitness classes this week: yoga on Monday, spin on Thursday."),
        ("W3", "user", "Remind me to buy oat milk."),
        ("W4", "user", "The garden needs water after the heat."),
    ],
)


@pytest.mark.parametrize(("skip", "first"), [(True, "W2"), (False, "W1")])
def test_keyword_search_ignores_the_way_a_question_is_asked(
    settings: Settings, clock: FrozenClock, skip: bool, first: str
) -> None:
    # In a few turns "how", "many" and "do" are as rare as "fitness": counted, they pull
    # up a turn that shares only the question's form (skip_function_words = false).
    with build_memory(
        settings.with_overrides(skip_function_words=skip), create=True, clock=clock
    ) as mem:
        mem.import_sessions("me", [WEEK])
        hits = mem.recall(
            "How many fitness classes do I attend in a typical week?",
            agent="me",
            k=2,
            mode="lexical",
            now=datetime(2024, 3, 10, tzinfo=UTC),
            record_access=False,
        ).hits
    assert hits[0].item.provenance.turn_ids[0] == first


# Only the embedded text differs between the runs below: no score-level context, and
# no relevance floor (the whole order of the turns is compared, unrelated ones too).
VECTORS_ONLY = {
    "neighbour_weight": 0.0,
    "answer_focus": 0.0,
    "session_weight": 0.0,
    "relevance_floor": 0.0,
}


def _vector_turns(mem: Memory, query: str, agent: str = "conv") -> list[str]:
    result = mem.recall(query, agent=agent, k=10, mode="vector", now=NOW, record_access=False)
    return [t for hit in result.hits for t in hit.item.provenance.turn_ids]


def test_a_reply_is_embedded_with_the_question_it_answers(
    settings: Settings, clock: FrozenClock
) -> None:
    query = "band at the birthday concert"
    with _memory(settings, clock, embed_context_words=0, **VECTORS_ONLY) as mem:
        alone = _vector_turns(mem, query)
    with _memory(settings, clock, **VECTORS_ONLY) as mem:
        in_exchange = _vector_turns(mem, query)
    assert alone.index("D1:3") > 3  # "It was Matt Patterson, he is so talented!"
    assert "D1:3" in in_exchange[:3]


def test_changing_the_exchange_context_re_embeds_the_workspace(
    settings: Settings, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    with _memory(settings, clock, embed_context_words=0, **VECTORS_ONLY):
        pass
    with caplog.at_level(logging.WARNING, logger="kronika"):
        reopened = build_memory(settings.with_overrides(**VECTORS_ONLY), clock=clock)
    with reopened as mem:
        assert "D1:3" in _vector_turns(mem, "band at the birthday concert")[:3]
    assert any("re-embedding" in record.getMessage() for record in caplog.records)
    cached, used = _vectors_and_texts(settings.home)
    assert cached == used  # the vectors of each turn alone are gone


@pytest.mark.parametrize(("replier", "rises"), [("Marek", True), ("assistant", False)])
def test_a_turn_is_embedded_again_once_a_person_answers_it(
    settings: Settings, clock: FrozenClock, replier: str, rises: bool
) -> None:
    question, aside = "Which city should I visit in spring?", "My sister's name is Ola."

    def similarity(mem: Memory) -> dict[str, float | None]:
        hits = mem.recall("Seville oranges", k=5, mode="vector", record_access=False).hits
        return {h.item.content: h.score.vector_similarity for h in hits}

    with build_memory(settings.with_overrides(**VECTORS_ONLY), create=True, clock=clock) as mem:
        mem.save_turn("chat-1", "Ola", aside)
        clock.advance(seconds=30)
        mem.save_turn("chat-1", "Ola", question)
        before = similarity(mem)
        clock.advance(seconds=30)
        mem.save_turn("chat-1", replier, "Seville: the orange trees bloom in spring.")
        after = similarity(mem)
    # A person's answer becomes part of the question's vector; the assistant's does
    # not (its long, generic replies would dilute the person's words). The earlier
    # turn, which no answer follows, is embedded as before either way.
    gain = (after[question] or 0.0) - (before[question] or 0.0)
    assert gain > 0.1 if rises else gain == 0.0
    assert after[aside] == before[aside]
    cached, used = _vectors_and_texts(settings.home)
    assert cached == used  # the question's vector from before the answer is gone


def _vectors_and_texts(home: Path) -> tuple[set[str], set[str]]:
    """The text hashes with a cached vector, and those some item uses."""
    with closing(sqlite3.connect(home / "index.sqlite")) as db:
        cached = {h for (h,) in db.execute("SELECT text_hash FROM embeddings")}
        used = {h for (h,) in db.execute("SELECT text_hash FROM items")}
    return cached, used


def test_a_forgotten_turn_leaves_no_vector_behind(settings: Settings, clock: FrozenClock) -> None:
    with _memory(settings, clock) as mem:
        turns = mem.index.list_items(RecallFilter(agents=("conv",)))
        said = next(t for t in turns if t.provenance.turn_ids == ("D1:3",))
        mem.forget(said.id, agent="conv")
        assert "D1:3" not in _vector_turns(mem, "Matt Patterson talented")
    cached, used = _vectors_and_texts(settings.home)
    # neither the turn's own vector nor those its neighbours were embedded with it
    assert cached == used and len(used) == 6


def test_a_text_said_again_and_again_takes_one_place(
    settings: Settings, clock: FrozenClock
) -> None:
    # the same errand in three sessions is one memory: its best copy is recalled once,
    # and the places it would take go to other memories
    errands = [
        conversation(
            f"errand-{n}",
            datetime(2023, 6, n, 9, 0, tzinfo=UTC),
            [(f"E{n}:1", "user", "how do I politely remind a client about an unpaid invoice?")],
        )
        for n in (1, 2, 3)
    ]
    with _memory(settings, clock) as mem:
        mem.import_sessions("chat", [*errands, SHOES])
        hits = mem.recall(
            "remind a client about an invoice", agent="chat", k=3, now=NOW, record_access=False
        ).hits
    contents = [hit.item.content for hit in hits]
    assert len(contents) == len(set(contents)) == 3
    assert contents[0] == "how do I politely remind a client about an unpaid invoice?"
    assert hits[0].item.provenance.session_id == "errand-3"  # the latest said


def test_a_text_said_in_every_month_tells_nothing_of_the_month_a_question_names(
    settings: Settings, clock: FrozenClock
) -> None:
    # the same errand asked every month is said in March too; what is said in March
    # alone is what a question about March is after
    errands = [
        conversation(
            f"errand-{month}",
            datetime(2023, month, 20, 9, 0, tzinfo=UTC),
            [(f"E{month}:1", "user", "how do I politely remind a client about an unpaid invoice?")],
        )
        for month in range(1, 7)
    ]
    march = conversation(
        "contract",
        datetime(2023, 3, 8, 9, 0, tzinfo=UTC),
        [("M1:1", "user", "signed the contract with our new client from Porto today, a big one")],
    )
    others = [
        conversation(
            f"other-{n}",
            datetime(2023, 1 + n % 6, 2 + n, 9, 0, tzinfo=UTC),
            [(f"O{n}:1", "user", text)],
        )
        for n, text in enumerate(
            [
                "booked a table for two at the Italian place on Friday",
                "my sister is visiting us next weekend with her kids",
                "started running again, five kilometres this morning",
                "the dentist moved my appointment to Thursday",
                "we adopted a grey cat from the shelter, her name is Mia",
                "finished reading the new thriller, the ending was weak",
            ]
        )
    ]
    question = "How did I do with the client in March?"
    with _memory(settings, clock) as mem:
        mem.import_sessions("chat", [*errands, march, *others])
        first = _first_turn(mem, question, agent="chat", now=datetime(2023, 9, 1, tzinfo=UTC))
        # asked of the errand alone, the month still finds the copy said then
        alone = mem.recall(
            "how do I politely remind a client about an unpaid invoice in March?",
            agent="chat",
            k=1,
            now=datetime(2023, 9, 1, tzinfo=UTC),
            record_access=False,
        ).hits
    assert first == "M1:1"
    assert alone[0].item.content.startswith("how do I politely remind")
