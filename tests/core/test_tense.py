"""Whether a question is said of the past or of the future (:mod:`kronika.core.tense`)."""

from __future__ import annotations

import pytest

from kronika.core.tense import tense_of


@pytest.mark.parametrize(
    ("text", "tense"),
    [
        ("What new sport did we pick up in the summer?", "past"),
        ("Where did I move in March?", "past"),
        ("What was my finishing time in the autumn race?", "past"),
        ("Which gym had I joined?", "past"),
        ("Czego nowego nauczyła się latem moja córka?", "past"),
        ("Co się wydarzyło w czerwcu?", "past"),
        ("Gdzie mieszkaliśmy zimą?", "past"),
        ("Яким спортом я займався навесні?", "past"),
        ("Що я купив навесні замість гаража?", "past"),
        ("Чого навчилася моя донька влітку?", "past"),
        ("¿Qué tipo de casa buscábamos en primavera?", "past"),
        ("¿Qué pasó en agosto?", "past"),
        ("¿Qué compré en primavera?", "past"),
        ("¿A qué gimnasio iba en marzo?", "past"),
        ("¿Dónde íbamos los domingos?", "past"),
        ("¿Cómo se llamaba el perro que era de mi abuela?", "past"),
        ("¿Qué te dije sobre mi jefe en marzo?", "past"),
        ("¿Qué veía los domingos?", "past"),
        ("¿Qué pude hacer en mayo?", "past"),
        # nouns spelt like a preterite of their own are not listed
        ("¿Qué vino me gusta?", None),
        ("¿Qué traje llevo a la boda?", None),
        ("Whose wedding will we go to in spring?", "future"),
        ("What I'll do in summer", "future"),
        ("Gdzie będę pracować latem?", "future"),
        ("Де я працюватиму влітку?", "future"),
        ("¿Qué carrera voy a correr en invierno?", "future"),
        ("¿Dónde trabajaré en verano?", "future"),
        # the present, which may speak of either
        ("Where do I live now?", None),
        ("Na czyje wesele idziemy wiosną?", None),
        ("На чиє весілля ми йдемо навесні?", None),
        ("Dokąd pojedziemy latem?", None),  # a perfective future: no mark
        # words that only look like a verb's past
        ("Kasia chodzi do szkoły, mała szkoła", None),
        ("Я живу в Києві", None),
        ("Which café do I like?", None),
        ("How many hundred people need a seat?", None),
        # marks of both: no time in particular
        ("I was told you will know", None),
    ],
)
def test_the_time_a_question_is_said_of(text: str, tense: str | None) -> None:
    assert tense_of(text) == tense
