"""The everyday forms of a given name (:mod:`kronika.core.given_names`)."""

from __future__ import annotations

from kronika.core.given_names import GROUPS, SHORTEST, name_forms


def test_a_full_name_gives_its_short_forms_and_a_short_form_its_full_name() -> None:
    assert name_forms("Katarzyna") == ("Katarzyna", "Kasia", "Kaśka", "Kasieńka")
    assert name_forms("Kasia")[:2] == ("Kasia", "Katarzyna")
    assert "Юра" in name_forms("Юрій") and "Юрій" in name_forms("Юрко")
    assert name_forms("José") == ("José", "Pepe", "Pepito")
    assert name_forms("jose") == ("jose", "Pepe", "Pepito")  # found as folded


def test_an_unknown_name_or_one_shared_by_two_names_gives_itself_alone() -> None:
    assert name_forms("Priya") == ("Priya",)
    assert name_forms("Alex") == ("Alex",)  # Alexander, Alexandra, Alejandro, Alejandra
    assert name_forms("Саша") == ("Саша",)
    # a full name that is also another's short form keeps its own group
    assert "Dan" in name_forms("Daniel") and "Dani" in name_forms("Daniel")


def test_every_form_given_is_long_enough_and_every_group_starts_with_a_full_name() -> None:
    for group in GROUPS:
        assert len(group) >= 2 and len(set(group)) == len(group), group
        for form in name_forms(group[0])[1:]:
            assert len(form) >= SHORTEST
        assert all(form[:1].isupper() for form in group), group
