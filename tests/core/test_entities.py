import pytest

from kronika.core.entities import extract_entities, normalize_entity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I met Anna in New York on Monday.", ("Anna", "New York")),
        ("Spotkałem Anię w Krakowie", ("Anię", "Krakowie")),
        ("Ayer fui a Madrid con María José.", ("Madrid", "María José")),
        ("Зустрів Олену в Києві", ("Олену", "Києві")),
        (
            "@Łukasz and @ana.maria-lopez joined; ping @Ольга.",
            ("Łukasz", "ana.maria-lopez", "Ольга"),
        ),
        ("Anna went home.", ()),
        ("Anna went home. Later I called Anna.", ("Anna",)),
        ("We talked to Peter. Then Peter's dog barked at Peter", ("Peter",)),
        ("mail me at jan@example.com tomorrow", ()),
        ("User: Hi! Yes, I think so. Thanks", ()),
        ("in January and on Friday", ()),
        ("W poniedziałek w Warszawie, a w maju w Gdańsku", ("Warszawie", "Gdańsku")),
        ("nothing capitalised here at all", ()),
        ("", ()),
    ],
)
def test_extract_entities(text, expected):
    assert extract_entities(text) == expected


def test_duplicates_collapse_case_insensitively_keeping_first_form():
    assert extract_entities("ask @anna, then tell Anna and ANNA") == ("anna",)


def test_normalize_entity():
    assert normalize_entity("  New   York ") == "new york"
    assert normalize_entity("STRASSE") == normalize_entity("straße")
