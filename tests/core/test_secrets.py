"""The secret detector: every documented shape is found, ordinary text is left alone."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kronika.core.secrets import (
    card_brand,
    find_secrets,
    is_card_number,
    luhn_valid,
    redact_secrets,
    secret_kinds,
)

# Made-up values in the providers' shapes (none of them is a real credential).
SECRETS = {
    "openai-key": "sk-proj-Q3x9vTz81LmNpR4sWuY7aBcD0eFgHiJk",
    "openai-key-legacy": "sk-4fGh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdEfGhIj",
    "anthropic-key": "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEdCbA-9z8y7x",
    "github-token": "ghp_4Gh7Jk2Lm9Np3Qr5St8Uv1Wx6Yz0AbCdE1234",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "gitlab-token": "glpat-x1Y2z3A4b5C6d7E8f9G0",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws-access-key": "AKIAQ3X9VTZ81LMNPR4S",
    "google-api-key": "AIzaSyB3x9vTz81LmNpR4sWuY7aBcD0eFgHiJkL",
    "stripe-key": "sk_live_51Hx9vTz81LmNpR4sWuY7aBcD",
    "stripe-restricted": "rk_live_51Hx9vTz81LmNpR4sWuY7aBcD",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
}
KIND = {name: name.split("-legacy")[0].replace("-pat", "-token") for name in SECRETS}
KIND["stripe-restricted"] = "stripe-key"

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDq3x9vTz81LmNpR4sWuY7aBcD0eFgHiJkLmNoPqRsTuQAAAJgAAAAAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

CARDS = [
    "4111 1111 1111 1111",  # Visa test number, spaced
    "4111-1111-1111-1111",
    "5555555555554444",  # Mastercard, one block
    "3782 822463 10005",  # Amex 4-6-5
    "6011 1111 1111 1117",  # Discover
    "3530 1113 3330 0000",  # JCB
    "4222222222222",  # Visa of 13 digits, the fewest a card has
    "4222 2222 2222 2",
]


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_every_provider_shape_is_found_in_a_sentence(name: str) -> None:
    value = SECRETS[name]
    text = f"here it is: {value} — keep it safe"
    redacted = redact_secrets(text)
    assert value not in redacted
    assert f"[secret: {KIND[name]}]" in redacted
    assert redacted.startswith("here it is: ") and redacted.endswith(" — keep it safe")


def test_aws_secret_key_beside_its_access_key_and_labelled() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY3XAMPLEKEY"
    text = f"id {SECRETS['aws-access-key']} secret {secret}"
    assert secret_kinds(text) == ("aws-access-key", "aws-secret-key")
    assert secret not in redact_secrets(text)
    assert secret_kinds(f"aws_secret_access_key = {secret}") == ("aws-secret-key",)
    # alone and unlabelled, 40 characters are just 40 characters
    assert secret_kinds(f"checksum {secret}") == ()


def test_private_key_blocks_whole_and_truncated() -> None:
    text = f"my key:\n{PEM}\nthanks!"
    assert redact_secrets(text) == "my key:\n[secret: private-key]\nthanks!"
    truncated = PEM.rsplit("\n", 1)[0] + "\n\nand then the message went on"
    redacted = redact_secrets(truncated)
    assert "b3BlbnNz" not in redacted and "QyNTUxOQ" not in redacted
    assert redacted.endswith("and then the message went on")


def test_authorization_headers_and_url_passwords() -> None:
    header = "curl -H 'Authorization: Bearer abc123DEF456ghi789' https://api.example.com"
    assert redact_secrets(header) == (
        "curl -H 'Authorization: Bearer [secret: bearer-token]' https://api.example.com"
    )
    assert secret_kinds("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l") == ("bearer-token",)
    url = "DATABASE_URL=postgres://ana:S3cr3t!x@db.local:5432/app"
    assert (
        redact_secrets(url)
        == "DATABASE_URL=postgres://ana:[secret: url-password]@db.local:5432/app"
    )
    assert secret_kinds("api_key = abcd1234efgh5678ijkl") == ("api-key",)
    assert secret_kinds("api key: see the wiki page") == ()


@pytest.mark.parametrize("card", CARDS)
def test_card_numbers(card: str) -> None:
    assert (
        redact_secrets(f"pay with {card}, exp 12/27") == "pay with [secret: card-number], exp 12/27"
    )


def test_numbers_that_are_not_cards() -> None:
    for text in (
        "4111 1111 1111 1112",  # fails Luhn
        "1234 5678 9012 3452",  # no card brand starts with 1
        "411 111 111 111 1111",  # not grouped like a card
        "+48 601 234 567",
        "555-123-4567",
        "2025-01-15 2025-01-16 10:30",
        "order 4111111111111111.5",
        "v4111-1111-1111-1111",
    ):
        assert find_secrets(text) == (), text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("my password is hunter22", "my password is [secret: password]"),
        ("password: correcthorsebatterystaple", "password: [secret: password]"),
        ("Password for the bank: Tr0ub4dor&3.", "Password for the bank: [secret: password]."),
        ("moje hasło to kot123!", "moje hasło to [secret: password]"),
        ("hasło do wifi: Zielona2024", "hasło do wifi: [secret: password]"),
        ("mi contraseña es perro2024", "mi contraseña es [secret: password]"),
        ("contraseña: Gato_Negro7", "contraseña: [secret: password]"),
        ("мій пароль — кіт12345", "мій пароль — [secret: password]"),
        ("пароль: Qwerty123", "пароль: [secret: password]"),
    ],
)
def test_passwords_in_four_languages(text: str, shown: str) -> None:
    assert redact_secrets(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "the password reset is scheduled for Monday",
        "my password is 12 characters long",
        "password: forgotten",
        "I forgot my password again",
        "moje hasło to tajemnica",
        "la contraseña es larga",
        "пароль — це секрет",
        "ask-learn-compatible transformers",
        "the sk-8 skates",
        "see https://example.com/a:b@c for details",
        "password = request.form['password']",
        '<label for="password">Password:</label>',
        'database_url = "postgresql://user:password@localhost/db"',
        "connect(user='<USERNAME>', password='<PASSWORD>')",
        "paste the key with its `-----BEGIN PRIVATE KEY-----` line",
    ],
)
def test_ordinary_sentences_about_secrets_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == (), text


def test_overlapping_matches_merge_and_the_specific_kind_names_them() -> None:
    jwt = SECRETS["jwt"]
    assert redact_secrets(f"Authorization: Bearer {jwt}") == "Authorization: Bearer [secret: jwt]"
    key = SECRETS["openai-key"]
    assert redact_secrets(f"OPENAI_API_KEY={key}") == "OPENAI_API_KEY=[secret: openai-key]"


# ------------------------------------------------------------------ properties
def _luhn_reference(number: str) -> bool:
    digits = [int(d) for d in number]
    odd = digits[-1::-2]
    even = [sum(divmod(2 * d, 10)) for d in digits[-2::-2]]
    return (sum(odd) + sum(even)) % 10 == 0


@given(st.text(alphabet="0123456789", min_size=1, max_size=25))
def test_luhn_agrees_with_a_second_formulation(number: str) -> None:
    assert luhn_valid(number) == _luhn_reference(number)


@given(st.text(alphabet="0123456789", min_size=12, max_size=18))
def test_exactly_one_check_digit_completes_a_number(body: str) -> None:
    assert sum(luhn_valid(body + d) for d in "0123456789") == 1


@given(st.integers(min_value=0, max_value=10**15 - 1), st.sampled_from([" ", "-", ""]))
def test_a_luhn_valid_visa_number_is_a_card_in_any_grouping(n: int, sep: str) -> None:
    body = "4" + f"{n:015d}"[:14]
    number = next(body + d for d in "0123456789" if luhn_valid(body + d))
    assert card_brand(number) == "visa"
    written = sep.join(number[i : i + 4] for i in range(0, 16, 4))
    assert is_card_number(written)
    assert redact_secrets(f"card {written}.") == "card [secret: card-number]."
    # change one digit and the check fails
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    assert find_secrets(f"card {wrong}.") == ()


_ORDINARY = (
    "I met Ana in Kraków on Monday at 10:30 and we talked about trains to Gdańsk for "
    "2 hours; the ticket cost 120 zł, flight LH1617 leaves 2025-03-15 14:05 from gate B12. "
    "Call +48 601 234 567 or (555) 123-4567, room 101, version 3.11.4, PIN code reset "
    "Lucas prefiere TypeScript desde 2019. Я переїхала до Львова у січні 2023 року. "
    "Mój numer zamówienia to 987-654-321 a kod pocztowy 30-001. Order 12345678, "
    "invoice 2024/11/0042, ISBN 978-3-16-148410-0, IBAN-like PL61 1090 1014, 1 000 000 "
    "people, 3.14159, 50% off, policy, token, key, secret"
)
_WORDS = _ORDINARY.split()


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=40), st.randoms())
def test_ordinary_text_with_numbers_dates_and_phones_is_not_a_secret(
    words: list[str], rnd: random.Random
) -> None:
    text = " ".join(words)
    assert find_secrets(text) == (), text


@given(st.lists(st.sampled_from([*_WORDS, *SECRETS.values(), *CARDS]), max_size=30))
def test_redacting_hides_every_secret_and_is_idempotent(parts: list[str]) -> None:
    text = " ".join(parts)
    once = redact_secrets(text)
    assert redact_secrets(once) == once
    for value in [*SECRETS.values(), *CARDS]:
        assert value not in once


@given(st.text(max_size=200))
def test_spans_are_ordered_disjoint_and_inside_the_text(text: str) -> None:
    spans = find_secrets(text)
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))


def _groups(sizes: list[int]) -> st.SearchStrategy[str]:
    return st.tuples(*(st.text("0123456789", min_size=n, max_size=n) for n in sizes)).map(" ".join)


_NUMBERISH = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: d.strftime("%d.%m.%Y")),
    st.dates().map(lambda d: d.strftime("%d/%m/%Y")),
    st.datetimes().map(lambda t: t.strftime("%Y-%m-%d %H:%M:%S")),
    st.times().map(lambda t: t.strftime("%H:%M")),
    _groups([3, 3, 3]).map(lambda g: "+48 " + g),  # Polish mobile numbers
    _groups([3, 3, 4]).map(lambda g: g.replace(" ", "-")),  # US numbers
    _groups([2, 3, 2, 2]).map(lambda g: "+34 " + g),  # Spanish numbers
    # amounts (each with its currency: four bare 4-digit numbers in a row *could* make a
    # valid card number, which is then rightly found)
    st.integers(min_value=0, max_value=10**12).map(lambda n: f"{n} PLN"),
    st.floats(min_value=0, max_value=1e9, allow_nan=False).map(lambda x: f"{x:,.2f}"),
    st.sampled_from(["I", "paid", "on", "call", "me", "at", "order", "from", "to", "and"]),
)


@settings(max_examples=500)
@given(st.lists(_NUMBERISH, min_size=1, max_size=12))
def test_generated_dates_times_phones_and_amounts_are_not_secrets(parts: list[str]) -> None:
    text = " ".join(parts)
    assert find_secrets(text) == (), text


_PIECES = st.sampled_from(
    [
        "password", "hasło", "contraseña", "пароль", ": ", " is ", " to ", " es ", " — ",
        "Abc123!", "kot12345", "4111", "1111", " ", "-", "\n", "[", "]", "[secret: x]",
        SECRETS["openai-key"], SECRETS["aws-access-key"], "Authorization: Bearer ",
        "abc123def456ghi", "https://", "ana:", "p4ss@", "api_key=", "eyJabcdefghij.",
    ]
)  # fmt: skip


@settings(max_examples=400)
@given(st.lists(_PIECES, max_size=14).map("".join))
@example("password to 4111hasło is Abc123!")  # one reading must not swallow the next
def test_redacting_is_idempotent_on_texts_crowded_with_secret_words(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once
