"""Questions about the past answered from fact history, on every backend.

"Where did she live in June?" is answered by the value true in June, "where did she
work before Spotify?" by the value before Spotify, without ``as_of``; a question about
now keeps the current value first, and "before bed" changes nothing. English, Polish,
Spanish and Ukrainian. Each test runs on Markdown + SQLite and on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend
from kronika import Memory
from kronika.core.model import RecallResult, Status
from kronika.testing import FrozenClock

NOW = datetime(2025, 11, 27, 12, 0, tzinfo=UTC)


def _lived_and_worked(backend: Backend, clock: FrozenClock, **settings: object) -> Memory:
    """city Kraków (January 2025) → Lviv (May) → Warszawa (September); job Google →
    Apple → Spotify at the same times; a drink that never changed; asked on 27 November."""
    memory = backend.open(clock=clock, **settings)
    clock.set(datetime(2024, 12, 20, tzinfo=UTC))
    memory.remember("herbata miętowa", key="evening drink")
    for moment, city, job in (
        (datetime(2025, 1, 10, tzinfo=UTC), "Kraków", "Google"),
        (datetime(2025, 5, 5, tzinfo=UTC), "Lviv", "Apple"),
        (datetime(2025, 9, 1, tzinfo=UTC), "Warszawa", "Spotify"),
    ):
        clock.set(moment)
        memory.remember(city, key="city")
        memory.remember(job, key="employer")
    clock.set(NOW)
    return memory


def _first(result: RecallResult, key: str) -> tuple[str | None, Status]:
    hit = next(h for h in result.hits if h.item.key == key)
    return hit.item.value, hit.item.status


THEN = [
    "Where did she live in June?",
    "Gdzie mieszkała w czerwcu?",
    "¿Dónde vivía en junio?",
    "Де вона жила у червні?",
    "Where did she live last summer?",
    "Gdzie mieszkała zeszłego lata?",
    "¿Dónde vivía el verano pasado?",
    "Де вона жила минулого літа?",
    "Where did she live five months ago?",
]


@pytest.mark.parametrize("question", THEN)
def test_a_named_period_answers_with_the_value_true_then(
    backend: Backend, clock: FrozenClock, question: str
) -> None:
    memory = _lived_and_worked(backend, clock)
    result = memory.recall(question, k=5, keys=["city"], record_access=False)
    hit = result.hits[0]
    assert (hit.item.value, hit.item.status) == ("Lviv", Status.SUPERSEDED)
    assert hit.citation.startswith("history.md#L")
    assert hit.score.history is not None and hit.score.history.startswith("true then")
    assert hit.item.valid_to == datetime(2025, 9, 1, tzinfo=UTC)


def test_a_period_without_a_key_filter_and_a_year(backend: Backend, clock: FrozenClock) -> None:
    memory = _lived_and_worked(backend, clock)
    assert _first(memory.recall("which city in March 2025?", k=10), "city") == (
        "Kraków",
        Status.SUPERSEDED,
    )
    before_may = memory.recall("What was her employer before May 2025?", k=10)  # April
    assert _first(before_may, "employer") == ("Google", Status.SUPERSEDED)


NOW_QUESTIONS = [
    "Where does she live?",
    "Gdzie mieszka?",
    "¿Dónde vive?",
    "Де вона живе?",
    "Where does she live this autumn?",
]


@pytest.mark.parametrize("question", NOW_QUESTIONS)
def test_a_question_about_now_keeps_the_current_value_first(
    backend: Backend, clock: FrozenClock, question: str
) -> None:
    memory = _lived_and_worked(backend, clock)
    result = memory.recall(question, k=5, keys=["city"], record_access=False)
    assert (result.hits[0].item.value, result.hits[0].item.status) == ("Warszawa", Status.CURRENT)
    assert result.hits[0].score.history is None
    assert all(h.item.status is Status.CURRENT for h in result.hits)


BEFORE_AFTER = [
    ("Where did she work before Spotify?", "employer", "Apple"),
    ("Gdzie pracowała przed Spotify?", "employer", "Apple"),
    ("¿Dónde trabajaba antes de Spotify?", "employer", "Apple"),
    ("Де вона працювала до Spotify?", "employer", "Apple"),
    ("Where did she work after Google?", "employer", "Apple"),
    ("Gdzie pracowała po Google?", "employer", "Apple"),
    ("¿Dónde trabajó después de Google?", "employer", "Apple"),
    ("Де вона працювала після Google?", "employer", "Apple"),
    ("Where did she work before Apple?", "employer", "Google"),
    ("Where did she live before she moved to Warsaw?", "city", "Lviv"),
    ("Gdzie mieszkała przed przeprowadzką do Warszawy?", "city", "Lviv"),
    ("Де вона працювала перед тим, як перейшла до Spotify?", "employer", "Apple"),
]


@pytest.mark.parametrize(("question", "key", "value"), BEFORE_AFTER)
def test_before_or_after_a_value_answers_with_its_neighbour_in_history(
    backend: Backend, clock: FrozenClock, question: str, key: str, value: str
) -> None:
    memory = _lived_and_worked(backend, clock)
    hits = memory.recall(question, k=10, record_access=False).hits
    hit = next(h for h in hits if h.item.key == key)  # the first value of that key
    assert hit.item.value == value
    assert hit.item.status is Status.SUPERSEDED
    assert hit.citation.startswith("history.md#L")
    assert hit.score.history is not None and hit.score.history.startswith("the value")


@pytest.mark.parametrize(
    ("question", "key", "value"),
    [
        ("Where did she work before Spotify?", "employer", "Apple"),
        ("Gdzie pracowała przed Spotify?", "employer", "Apple"),
        ("Who was her employer in June?", "employer", "Apple"),
    ],
)
def test_a_past_value_the_history_chose_passes_the_relevance_floor(
    backend: Backend, clock: FrozenClock, question: str, key: str, value: str
) -> None:
    # a floor no cosine reaches: the past value shares no word with the question, and
    # stands on the evidence of its key (the later value named in it, or the key's word)
    memory = _lived_and_worked(backend, clock, relevance_floor="0.99")
    hits = memory.recall(question, k=10, record_access=False).hits
    hit = next(h for h in hits if h.item.key == key)
    assert (hit.item.value, hit.item.status) == (value, Status.SUPERSEDED)


FALSE_TRIGGERS = [
    "What does she drink before bed?",
    "Co pije przed snem?",
    "¿Qué bebe antes de dormir?",
    "Що вона п'є перед сном?",
    "When did she move to Warsaw?",
    "Коли вона переїхала до Варшави?",
]


@pytest.mark.parametrize("question", FALSE_TRIGGERS)
def test_before_something_that_names_no_value_changes_nothing(
    backend: Backend, clock: FrozenClock, question: str
) -> None:
    memory = _lived_and_worked(backend, clock)
    result = memory.recall(question, k=10, record_access=False)
    assert all(h.item.status is Status.CURRENT for h in result.hits)
    assert all(h.score.history is None for h in result.hits)


def test_an_explicit_as_of_still_decides(backend: Backend, clock: FrozenClock) -> None:
    memory = _lived_and_worked(backend, clock)
    result = memory.recall("Where did she live in June?", k=5, keys=["city"], as_of="2025-02-01")
    assert [h.item.value for h in result.hits] == ["Kraków"]
    assert result.hits[0].score.history is None


def test_a_filter_without_facts_reads_no_history(backend: Backend, clock: FrozenClock) -> None:
    memory = _lived_and_worked(backend, clock)
    memory.note("In June she walked along the river every evening")
    result = memory.recall("Where did she live in June?", k=5, types=["note"])
    assert [h.item.type.value for h in result.hits] == ["note"]


def test_each_past_value_says_why_it_came(backend: Backend, clock: FrozenClock) -> None:
    memory = _lived_and_worked(backend, clock)
    hits = memory.recall("Where did she work after Google?", k=5, keys=["employer"]).hits
    why = {h.item.value: h.score.history for h in hits}
    assert hits[0].item.value == "Apple"
    assert why["Apple"] == "the value after 'Google' (2025-05-05 → 2025-09-01)"
    assert why["Google"] == "the value the question names (2025-01-10 → 2025-05-05)"
    assert why["Spotify"] is None  # the current value needs no reason


def _moved_then_changed_jobs(
    backend: Backend, clock: FrozenClock, cities: tuple[str, str], jobs: tuple[str, str]
) -> Memory:
    """A city that changed on 1 June 2025 and an employer that changed on 1 July 2025,
    each first kept in January; asked on 27 November."""
    memory = backend.open(clock=clock)
    for moment, key, value in (
        (datetime(2025, 1, 5, tzinfo=UTC), "city", cities[0]),
        (datetime(2025, 1, 6, tzinfo=UTC), "employer", jobs[0]),
        (datetime(2025, 6, 1, tzinfo=UTC), "city", cities[1]),
        (datetime(2025, 7, 1, tzinfo=UTC), "employer", jobs[1]),
    ):
        clock.set(moment)
        memory.remember(value, key=key)
    clock.set(NOW)
    return memory


BRISTOL = (("Leeds", "Bristol"), ("Monzo", "Nubank"))
ANOTHER_KEY = [
    ("Where did I work before I moved to Bristol?", *BRISTOL),
    ("Gdzie pracowałam przed przeprowadzką do Bristolu?", *BRISTOL),
    ("¿Dónde trabajaba antes de mudarme a Bristol?", *BRISTOL),
    ("Де я працював до переїзду в Київ?", ("Одеса", "Київ"), ("EPAM", "Ajax")),
]


@pytest.mark.parametrize(("question", "cities", "jobs"), ANOTHER_KEY)
def test_before_a_value_of_another_key_answers_with_the_value_true_then(
    backend: Backend,
    clock: FrozenClock,
    question: str,
    cities: tuple[str, str],
    jobs: tuple[str, str],
) -> None:
    """ "Where did I work before I moved to Bristol?" names a city and asks for an
    employer: the one true before Bristol became the city (1 June) comes first, not the
    city before Bristol, and not the employer before the current one by chance (the
    jobs changed a month after the move)."""
    memory = _moved_then_changed_jobs(backend, clock, cities, jobs)
    hits = memory.recall(question, k=5, record_access=False).hits
    first = hits[0]
    assert (first.item.key, first.item.value) == ("employer", jobs[0])
    assert first.item.status is Status.SUPERSEDED
    assert first.score.history == (
        f"the value before {cities[1]!r} became true on 2025-06-01 (2025-01-06 → 2025-07-01)"
    )


def test_after_a_value_of_another_key_answers_with_the_value_true_then(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = _moved_then_changed_jobs(backend, clock, *BRISTOL)
    hits = memory.recall("Where did I live after I started at Nubank?", k=5).hits
    assert (hits[0].item.key, hits[0].item.value) == ("city", "Bristol")
    assert hits[0].score.history == (
        "the value after 'Nubank' became true on 2025-07-01 (2025-06-01 → now)"
    )
    # the same key asked about keeps the neighbour in its own history
    same = memory.recall("Where did I live before Bristol?", k=5).hits
    assert (same[0].item.value, same[0].score.history) == (
        "Leeds",
        "the value before 'Bristol' (2025-01-05 → 2025-06-01)",
    )


DURING = [
    ("Where did I live when I worked at Monzo?", *BRISTOL, "Leeds"),
    ("Gdzie mieszkałam, kiedy pracowałam w Monzo?", *BRISTOL, "Leeds"),
    ("¿Dónde vivía cuando trabajaba en Monzo?", *BRISTOL, "Leeds"),
    ("Де я жила, коли працювала в EPAM?", ("Одеса", "Київ"), ("EPAM", "Ajax"), "Одеса"),
    ("Where did I live while I worked at Nubank?", *BRISTOL, "Bristol"),
]


@pytest.mark.parametrize(("question", "cities", "jobs", "city"), DURING)
def test_while_a_value_of_another_key_was_true_answers_with_the_value_true_then(
    backend: Backend,
    clock: FrozenClock,
    question: str,
    cities: tuple[str, str],
    jobs: tuple[str, str],
    city: str,
) -> None:
    """ "Where did I live when I worked at Monzo?": Monzo was the employer from January
    to July, Leeds the city until June and Bristol after: Leeds was true for longer
    then. A value still true ("while I worked at Nubank") goes on to now."""
    memory = _moved_then_changed_jobs(backend, clock, cities, jobs)
    hits = memory.recall(question, k=5, record_access=False).hits
    assert (hits[0].item.key, hits[0].item.value) == ("city", city)
    assert hits[0].score.history is not None
    assert hits[0].score.history.startswith("the value while")


def test_a_question_asking_when_is_no_while_clause(backend: Backend, clock: FrozenClock) -> None:
    memory = _moved_then_changed_jobs(backend, clock, *BRISTOL)
    hits = memory.recall("When did I move to Bristol?", k=5, record_access=False).hits
    assert all(h.score.history is None for h in hits)
    assert all(h.item.status is Status.CURRENT for h in hits)


@pytest.mark.parametrize(
    "question",
    ["When did I work at Monzo?", "¿Cuándo trabajé en Monzo?", "Kiedy pracowałam w Monzo?"],
)
def test_a_past_value_the_question_names_is_found_in_history(
    backend: Backend, clock: FrozenClock, question: str
) -> None:
    """ "When did I work at Monzo?" names a value the employer no longer has: it comes
    from the history, with its time, though the question names no period."""
    memory = _moved_then_changed_jobs(backend, clock, *BRISTOL)
    hits = memory.recall(question, k=5, record_access=False).hits
    assert (hits[0].item.value, hits[0].item.status) == ("Monzo", Status.SUPERSEDED)
    assert hits[0].score.history == "a past value the question names (2025-01-06 → 2025-07-01)"
    assert hits[0].citation.startswith("history.md#L")


def test_a_question_naming_no_past_value_gets_none(backend: Backend, clock: FrozenClock) -> None:
    memory = _moved_then_changed_jobs(backend, clock, *BRISTOL)
    for question in ("Where do I live now?", "Who is Nubank's CEO?", "Is Bristol nice?"):
        hits = memory.recall(question, k=5, record_access=False).hits
        assert all(h.item.status is Status.CURRENT for h in hits), question


def test_a_bare_word_looks_up_current_memories_only(backend: Backend, clock: FrozenClock) -> None:
    """ "Monzo" alone is no question: it finds what is kept now, not the history."""
    memory = _moved_then_changed_jobs(backend, clock, *BRISTOL)
    hits = memory.recall("Monzo", k=5, record_access=False).hits
    assert all(h.item.status is Status.CURRENT for h in hits)


def test_a_channel_filter_holds_for_the_history_read(backend: Backend, clock: FrozenClock) -> None:
    """The city is kept in the user's "home" channel, the employer in "work" and last
    in "home". Asked with no channel, "before I moved to Bristol" reads the employer's
    history across both; asked in "home", no value kept in "work" comes back, past
    ones included."""
    ann = backend.open(clock=clock).as_reader(user="ann")
    for moment, key, value, channel in (
        (datetime(2025, 1, 5, tzinfo=UTC), "city", "Leeds", "home"),
        (datetime(2025, 1, 6, tzinfo=UTC), "employer", "Monzo", "work"),
        (datetime(2025, 6, 1, tzinfo=UTC), "city", "Bristol", "home"),
        (datetime(2025, 7, 1, tzinfo=UTC), "employer", "Nubank", "work"),
        (datetime(2025, 8, 1, tzinfo=UTC), "employer", "Acme", "home"),
    ):
        clock.set(moment)
        ann.remember(value, key=key, channel=channel, scope="personal")
    clock.set(NOW)
    question = "Where did I work before I moved to Bristol?"
    anywhere = ann.recall(question, k=5, record_access=False).hits
    assert (anywhere[0].item.value, anywhere[0].item.channel) == ("Monzo", "work")
    at_home = ann.recall(question, k=5, channel="home", record_access=False).hits
    assert at_home
    assert {h.item.channel for h in at_home} == {"home"}
