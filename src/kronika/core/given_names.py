"""The everyday forms of a given name: "Kasia" is Katarzyna, "Zosia" is Zofia, "Юра" is
Юрій, "Pepe" is José, "Bob" is Robert. A memory that keeps the user's name as
``imię: Katarzyna`` is asked "Where does Kasia work now?"; recall must know that Kasia is
the user (:mod:`kronika.core.owner`).

:data:`GROUPS` lists, for common given names of the four languages kronika reads
(English, Polish, Spanish, Ukrainian), the name as written in full and the short and
affectionate forms people are called by, in the nominative: the inflected forms
("Kasi", "Kasię", "Юри") are matched from these as any name is
(:func:`kronika.core.owner.is_the_users_name`). A group is one name in one language:
a name is not translated (Katarzyna is not Catherine), and a form shared by two names
("Саша" is Олександр and Олександра) belongs to both groups. The lists are general
knowledge of each language's naming, not drawn from any memory or benchmark.
"""

from __future__ import annotations

from functools import cache

from kronika.core.text import fold

GROUPS: tuple[tuple[str, ...], ...] = (
    # Polish
    ("Katarzyna", "Kasia", "Kaśka", "Kasieńka"),
    ("Zofia", "Zosia", "Zośka"),
    ("Małgorzata", "Małgosia", "Gosia", "Gośka"),
    ("Aleksandra", "Ola", "Olka", "Ala"),
    ("Joanna", "Asia", "Aśka", "Joasia"),
    ("Barbara", "Basia", "Baśka"),
    ("Magdalena", "Magda", "Madzia"),
    ("Agnieszka", "Aga", "Agnisia"),
    ("Elżbieta", "Ela", "Elka"),
    ("Anna", "Ania", "Anka", "Anusia"),
    ("Maria", "Marysia", "Maryśka"),
    ("Krystyna", "Krysia", "Krystynka"),
    ("Dorota", "Dorotka", "Dora"),
    ("Monika", "Monia"),
    ("Natalia", "Natalka", "Nata"),
    ("Weronika", "Wera", "Weronka"),
    ("Justyna", "Justynka"),
    ("Ewa", "Ewka", "Ewunia"),
    ("Urszula", "Ula", "Urszulka"),
    ("Tomasz", "Tomek"),
    ("Wojciech", "Wojtek"),
    ("Jakub", "Kuba"),
    ("Krzysztof", "Krzyś", "Krzysiek"),
    ("Michał", "Michałek", "Misiek"),
    ("Piotr", "Piotrek"),
    ("Paweł", "Pawełek"),
    ("Marek", "Mareczek"),
    ("Andrzej", "Jędrek", "Andrzejek"),
    ("Aleksander", "Olek", "Aleks"),
    ("Stanisław", "Staszek", "Stasiu"),
    ("Grzegorz", "Grzesiek", "Grześ"),
    ("Łukasz", "Łukaszek"),
    ("Bartłomiej", "Bartek"),
    ("Mateusz", "Mateuszek"),
    ("Jan", "Janek", "Jaś"),
    ("Józef", "Józek"),
    ("Kazimierz", "Kazik"),
    ("Przemysław", "Przemek"),
    ("Włodzimierz", "Włodek"),
    # Ukrainian
    ("Олександр", "Саша", "Сашко", "Олесь"),
    ("Олександра", "Саша", "Леся"),
    ("Юрій", "Юра", "Юрко"),
    ("Оксана", "Ксеня", "Оксанка"),
    ("Катерина", "Катя", "Катруся"),
    ("Ірина", "Іра", "Ірися"),
    ("Наталія", "Наталя", "Наташа", "Наталка"),
    ("Марія", "Маша", "Марійка", "Маруся"),
    ("Анна", "Аня", "Ганна", "Ганнуся"),
    ("Олена", "Лена", "Оленка"),
    ("Тетяна", "Таня", "Танюша"),
    ("Світлана", "Світла", "Світланка"),
    ("Людмила", "Люда", "Міла"),
    ("Софія", "Соня", "Софійка"),
    ("Дмитро", "Діма", "Дмитрик"),
    ("Андрій", "Андрійко"),
    ("Михайло", "Михась", "Міша"),
    ("Володимир", "Володя", "Вова"),
    ("Микола", "Коля", "Миколка"),
    ("Іван", "Іванко", "Ваня"),
    ("Петро", "Петрик", "Петя"),
    ("Сергій", "Сергійко", "Сергійчик"),
    ("Тарас", "Тарасик"),
    ("Богдан", "Богданчик", "Бодя"),
    ("Василь", "Василько", "Вася"),
    # Spanish
    ("José", "Pepe", "Pepito"),
    ("Francisco", "Paco", "Pancho", "Curro", "Fran"),
    ("Ignacio", "Nacho"),
    ("Guadalupe", "Lupe", "Lupita"),
    ("Dolores", "Lola", "Loles"),
    ("Concepción", "Concha", "Conchita"),
    ("Manuel", "Manolo", "Manu"),
    ("Antonio", "Toño", "Toni"),
    ("Jesús", "Chucho", "Chuy"),
    ("Alejandro", "Álex", "Alejo"),
    ("Alejandra", "Álex", "Ale"),
    ("Rosario", "Charo", "Chayo"),
    ("Mercedes", "Merche", "Meche"),
    ("Enrique", "Quique"),
    ("Eduardo", "Edu", "Lalo"),
    ("Guillermo", "Memo", "Guille"),
    ("Roberto", "Beto", "Rober"),
    ("Alberto", "Beto"),
    ("Fernando", "Nando", "Fer"),
    ("Fernanda", "Fer", "Nanda"),
    ("Valeria", "Vale"),
    ("Lucía", "Lu", "Luci"),
    ("Isabel", "Isa", "Chabela"),
    ("Javier", "Javi"),
    ("Pablo", "Pablito"),
    ("Daniel", "Dani"),
    ("Daniela", "Dani"),
    ("Santiago", "Santi"),
    ("Carmen", "Carmencita", "Mamen"),
    # English
    ("Robert", "Bob", "Bobby", "Rob", "Robbie", "Bert"),
    ("William", "Bill", "Billy", "Will", "Liam"),
    ("Richard", "Dick", "Rick", "Rich", "Richie"),
    ("James", "Jim", "Jimmy", "Jamie"),
    ("John", "Johnny", "Jack"),
    ("Michael", "Mike", "Mikey", "Mick"),
    ("Thomas", "Tom", "Tommy"),
    ("Edward", "Ed", "Eddie", "Ted", "Ned"),
    ("Alexander", "Alex", "Sandy", "Xander"),
    ("Alexandra", "Alex", "Lexi", "Sandra"),
    ("Christopher", "Chris", "Kit"),
    ("Christine", "Chris", "Chrissy", "Tina"),
    ("Daniel", "Dan", "Danny"),
    ("Matthew", "Matt"),
    ("Nicholas", "Nick", "Nicky"),
    ("Benjamin", "Ben", "Benny"),
    ("Samuel", "Sam", "Sammy"),
    ("Samantha", "Sam", "Sammy"),
    ("Joseph", "Joe", "Joey"),
    ("Anthony", "Tony"),
    ("Andrew", "Andy", "Drew"),
    ("Elizabeth", "Liz", "Lizzie", "Beth", "Betty", "Eliza", "Libby"),
    ("Margaret", "Maggie", "Meg", "Peggy", "Greta"),
    ("Katherine", "Kate", "Katie", "Kathy", "Kat"),
    ("Catherine", "Cathy", "Cat", "Kate"),
    ("Jennifer", "Jen", "Jenny"),
    ("Rebecca", "Becky", "Becca"),
    ("Victoria", "Vicky", "Tori"),
    ("Patricia", "Pat", "Patty", "Trish"),
    ("Deborah", "Debbie", "Deb"),
    ("Susan", "Sue", "Susie"),
    ("Abigail", "Abby"),
    ("Jessica", "Jess", "Jessie"),
    ("Alice", "Ally", "Allie"),
)
"""Each group: a given name in full first, then the forms it is called by."""


SHORTEST = 3
"""Forms shorter than this are left out of what :func:`name_forms` gives: "Lu" or "Ed"
would be a form of too many words."""


@cache
def _groups_of() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Each form, folded and casefolded, to the groups it belongs to."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for group in GROUPS:
        for form in dict.fromkeys(_key(f) for f in group):
            found.setdefault(form, []).append(group)
    return {k: tuple(v) for k, v in found.items()}


def _key(name: str) -> str:
    return fold(name).casefold()


def name_forms(name: str) -> tuple[str, ...]:
    """``name`` and the other forms of the given name it is a form of, ``name`` first:
    ``Katarzyna`` gives ``Kasia``, ``Kaśka``…, and ``Kasia`` gives ``Katarzyna`` and the
    rest of its group. A name no group holds gives itself alone, and so does a short
    form of more than one name that is the full name of none ("Sasha", "Alex": whose
    is unknown, and another person's name must not be taken for the user's)."""
    key = _key(name)
    groups = _groups_of().get(key, ())
    full = [g for g in groups if _key(g[0]) == key]
    chosen = full or (groups if len(groups) == 1 else ())
    forms = (f for g in chosen for f in g if _key(f) != key and len(f) >= SHORTEST)
    return (name, *dict.fromkeys(forms))


__all__ = ["GROUPS", "SHORTEST", "name_forms"]
