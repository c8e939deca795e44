"""Secrets in text: API keys, tokens, private keys, card numbers, passwords.

:func:`find_secrets` returns the spans of text that are almost certainly secrets;
:func:`redact_secrets` replaces each with a visible marker, ``[secret: <kind>]``.
Only high-confidence shapes are matched — a false alarm that mangles an ordinary
memory costs more than a missed secret of an unknown shape:

* provider keys and tokens by their fixed prefixes and lengths (the shapes secret
  scanners such as gitleaks and detect-secrets use): OpenAI ``sk-…``/``sk-proj-…``,
  Anthropic ``sk-ant-…``, GitHub ``ghp_…``/``github_pat_…``, GitLab ``glpat-…``, Slack
  ``xox?-…``, AWS ``AKIA…``/``ASIA…`` (and a 40-character secret key beside one or
  labelled as one), Google ``AIza…``, Stripe ``sk_live_…``/``rk_live_…``, JSON Web
  Tokens ``eyJ….eyJ….…`` and PEM ``-----BEGIN … PRIVATE KEY-----`` blocks;
* the credential of an ``Authorization: Bearer|Basic|Token …`` header, the password
  of a ``scheme://user:password@host`` URL, and the value of a labelled ``api key: …``
  / ``client_secret = …`` of at least 16 characters mixing letters and digits;
* card numbers: 13-19 digits, written together or in groups of four (Amex 4-6-5,
  Diners 4-6-4) with one kind of separator, a known card-brand prefix, and a valid
  Luhn check digit;
* a password after ``password``/``hasło``/``contraseña``/``пароль`` (and their forms):
  labelled (``password: …``, ``hasło do banku = …``) the value must be 6+ characters
  with a digit, a symbol or an inner capital, or 12+ characters; spoken (``my password
  is …``, ``moje hasło to …``, ``mi contraseña es …``, ``мій пароль — …``) it must be
  6+ characters with a digit or a symbol.

Overlapping spans merge into one (the more specific kind names it), so no part of a
secret is left readable. Redacting is idempotent: a marker is never taken for a secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SecretSpan:
    """``text[start:end]`` is a secret of ``kind`` (``openai-key``, ``card-number``…)."""

    start: int
    end: int
    kind: str


def marker(kind: str) -> str:
    """What a redacted secret becomes: ``[secret: openai-key]``."""
    return f"[secret: {kind}]"


# Values that stand for a password rather than being one: "your_password", "<PASSWORD>",
# "${DB_PASS}", or code that reads it ("request.form['password']").
_PLACEHOLDER_WORDS = ("password", "passwd", "your", "example", "changeme", "placeholder")
_PLACEHOLDER_MARKS = frozenset("<>{}[]()$")


def _placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        any(word in lowered for word in _PLACEHOLDER_WORDS)
        or any(c in _PLACEHOLDER_MARKS for c in value)
        or "xxx" in lowered
        or "***" in value
        or "..." in value
    )


def _has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


def _has_letter(s: str) -> bool:
    return any(c.isalpha() for c in s)


def _digit_and_letter(s: str) -> bool:
    return _has_digit(s) and _has_letter(s)


_PEM = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_B64 = r"[A-Za-z0-9+/=]"

# (kind, pattern, check of the matched group "s" or the whole match); most specific first
_TOKENS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = (
    # a truncated block (no END line) still hides its base64 lines
    (
        "private-key",
        re.compile(
            # a body must follow (header lines such as "Proc-Type: …" aside): a mention
            # of the BEGIN line in prose is not a key
            rf"{_PEM}\s*(?:[A-Za-z\-]+:[^\n]*\n\s*)*{_B64}{{16,}}"
            rf"(?:.*?{_PEM_END}|(?:\s*{_B64}{{16,}})*)",
            re.S,
        ),
        None,
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), _digit_and_letter),
    (
        "openai-key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        _digit_and_letter,
    ),
    ("stripe-key", re.compile(r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,}"), _has_digit),
    (
        "github-token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        None,
    ),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), None),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), _has_digit),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), None),
    ("google-api-key", re.compile(r"\bAIza[A-Za-z0-9_\-]{35}(?![A-Za-z0-9_\-])"), None),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"), None),
    (
        "bearer-token",
        re.compile(
            r"(?i:\bauthorization)\s*[:=]\s*(?i:bearer|basic|token)\s+"
            r"(?P<s>[A-Za-z0-9._~+/=\-]{8,})"
        ),
        None,
    ),
    (
        "url-password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:(?P<s>[^\s:/@]+)@"),
        lambda s: not _placeholder(s),
    ),
    (
        "aws-secret-key",
        re.compile(
            r"(?i:\baws_?secret(?:_?access)?(?:_?key)?)\s*[:=]\s*[\"']?"
            r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        None,
    ),
    (
        "api-key",
        re.compile(
            r"(?i:\b(?:api[_ \-]?(?:key|token|secret)|access[_ \-]?token|auth[_ \-]?token"
            r"|secret[_ \-]?key|client[_ \-]?secret))\s*(?:[:=]|\bis\b)\s*[\"']?"
            r"(?P<s>[A-Za-z0-9_\-+/=.]{16,})"
        ),
        _digit_and_letter,
    ),
)

# a bare 40-character AWS secret key counts only this close to an access key id
_AWS_NEAR = 200
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_secret_shape(s: str) -> bool:
    return _has_digit(s) and any(c.isupper() for c in s) and any(c.islower() for c in s)


# ------------------------------------------------------------------ card numbers
_DIGIT_RUN = re.compile(r"(?<![\w\-.,/])\d+(?:[ \-]\d+)*(?![\w\-]|[.,/]\d)")


def luhn_valid(digits: str) -> bool:
    """The Luhn check: doubling every second digit from the right (9 subtracted from
    results above 9), the digits sum to a multiple of 10."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_brand(digits: str) -> str | None:
    """The card brand whose number prefix (IIN) and length ``digits`` has, else None."""
    n = len(digits)
    two, four = int(digits[:2]), int(digits[:4])
    if digits[0] == "4" and n in (13, 16, 19):
        return "visa"
    if (51 <= two <= 55 or 2221 <= four <= 2720) and n == 16:
        return "mastercard"
    if two in (34, 37) and n == 15:
        return "amex"
    if (digits.startswith("6011") or two == 65 or 644 <= int(digits[:3]) <= 649) and n in (16, 19):
        return "discover"
    if 3528 <= four <= 3589 and 16 <= n <= 19:
        return "jcb"
    if (two in (36, 38, 39) or 300 <= int(digits[:3]) <= 305) and 14 <= n <= 19:
        return "diners"
    if two == 62 and 16 <= n <= 19:
        return "unionpay"
    if two in (50, 56, 57, 58, 63, 67) and 13 <= n <= 19:
        return "maestro"
    return None


def _card_grouping(groups: list[str]) -> bool:
    """One block of digits, or blocks of four (the last 1-4), or Amex/Diners 4-6-5/4-6-4."""
    sizes = [len(g) for g in groups]
    if len(sizes) == 1:
        return True
    if sizes in ([4, 6, 5], [4, 6, 4]):
        return True
    return all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4


def is_card_number(text: str) -> bool:
    """``text`` (digits with optional single spaces or dashes) is a plausible card number."""
    seps = {c for c in text if not c.isdigit()}
    if len(seps) > 1 or (seps and not seps <= {" ", "-"}):
        return False
    groups = re.split(r"[ \-]", text) if seps else [text]
    digits = "".join(groups)
    return (
        13 <= len(digits) <= 19
        and _card_grouping(groups)
        and card_brand(digits) is not None
        and luhn_valid(digits)
    )


_DIGITS = re.compile(r"\d+")
_CARD_DIGITS = 13  # the fewest digits of a card number (a 13-digit Visa, Maestro)


def _cards(text: str) -> Iterator[SecretSpan]:
    for run in _DIGIT_RUN.finditer(text):
        found = run.group()
        if len(found) - found.count(" ") - found.count("-") < _CARD_DIGITS:
            continue  # too few digits for any card among them (a year, a note number)
        parts = list(_DIGITS.finditer(found))
        i = 0
        while i < len(parts):
            # the longest card starting at part i (five groups at most: 4-4-4-4-3)
            for j in range(min(len(parts), i + 5), i, -1):
                start, end = parts[i].start(), parts[j - 1].end()
                if is_card_number(found[start:end]):
                    yield SecretSpan(run.start() + start, run.start() + end, "card-number")
                    i = j - 1
                    break
            i += 1


# ------------------------------------------------------------------------ passwords
_PASSWORD_WORD = (
    r"(?i:\b(?:pass(?:word|wd|phrase)s?|has(?:ło|lo|ła|la|łem|lem)|haśle"
    r"|contrase(?:ña|na)s?|парол(?:ь|я|ем|і|ю))\b)"
)
# a short qualifier may stand between the word and its value ("password for the
# bank: …"); never a bracket, so a marker's own "password]" starts nothing
_QUALIFIER = r"[^\n:=.!?\[\]]{0,40}?"
_VALUE = r"(?P<s>[^\s\[\]][^\s]*)"
_LABELLED = re.compile(rf"{_PASSWORD_WORD}{_QUALIFIER}[ \t]*[:=][ \t]*{_VALUE}")
_WORD = re.compile(_PASSWORD_WORD)
_SPOKEN = re.compile(rf"{_PASSWORD_WORD}{_QUALIFIER}\s(?i:is|was|es|era|це|є|—|–|-)\s+{_VALUE}")
# "to" (Polish "is") only right after the word: in English "password … up to date" is none
_SPOKEN_TO = re.compile(rf"{_PASSWORD_WORD}\s+(?i:to)\s+{_VALUE}")
_TRAILING = ".,;)\"'”»*`"
_LEADING = "\"'“„«(*`"
_PLAIN = frozenset("'’-")


def _has_symbol(s: str) -> bool:
    return any(not c.isalnum() and c not in _PLAIN for c in s)


def _inner_capital(s: str) -> bool:
    return any(c.isupper() for c in s[1:])


def _labelled_password(s: str) -> bool:
    if _placeholder(s):
        return False
    if len(s) >= 12:
        return True
    return len(s) >= 6 and (_has_digit(s) or _has_symbol(s) or _inner_capital(s))


def _spoken_password(s: str) -> bool:
    return not _placeholder(s) and len(s) >= 6 and (_has_digit(s) or _has_symbol(s))


_PASSWORD_FORMS = (
    (_LABELLED, _labelled_password),
    (_SPOKEN_TO, _spoken_password),
    (_SPOKEN, _spoken_password),
)


def _passwords(text: str) -> Iterator[SecretSpan]:
    # each mention of the word is read on its own, so one reading cannot swallow the next
    for word in _WORD.finditer(text):
        for pattern, check in _PASSWORD_FORMS:
            match = pattern.match(text, word.start())
            if match is None:
                continue
            start, end = match.span("s")
            while end > start and text[end - 1] in _TRAILING:
                end -= 1
            while start < end and text[start] in _LEADING:
                start += 1
            if check(text[start:end]):
                yield SecretSpan(start, end, "password")
                break


# ------------------------------------------------------------------------- finding
# A pattern is tried only on text holding one of its words (lower-cased): most texts
# hold none, and a substring test is far cheaper than a regex pass.
_HINTS: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "stripe-key": ("k_live_", "k_test_", "k_prod_"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",),
    "slack-token": ("xox",),
    "aws-access-key": ("akia", "asia"),
    "google-api-key": ("aiza",),
    "jwt": ("eyj",),
    "bearer-token": ("authorization",),
    "url-password": ("://",),
    "aws-secret-key": ("aws",),
    "api-key": ("api", "token", "secret"),
    "password": ("pass", "hasł", "hasl", "haśl", "contrase", "парол"),
}
_FOUR_DIGITS = re.compile(r"\d{4}")  # every card number starts with four digits
# one pass for a text that holds none of the words (most): no kind is tried on it
_ANY_HINT = re.compile("|".join(re.escape(h) for hints in _HINTS.values() for h in hints))

_PRIORITY = {kind: rank for rank, (kind, _, _) in enumerate(_TOKENS)}
_PRIORITY["card-number"] = len(_PRIORITY)
_PRIORITY["password"] = len(_PRIORITY)


def _hinted(kind: str, lowered: str) -> bool:
    return any(hint in lowered for hint in _HINTS[kind])


def _candidates(text: str) -> Iterator[SecretSpan]:
    lowered = text.lower()
    if _ANY_HINT.search(lowered) is None:
        if _FOUR_DIGITS.search(text):
            yield from _cards(text)
        return
    aws: list[SecretSpan] = []
    for kind, pattern, check in _TOKENS:
        if not _hinted(kind, lowered):
            continue
        for match in pattern.finditer(text):
            group = "s" if "s" in pattern.groupindex else 0
            value = match.group(group)
            if check is None or check(value):
                span = SecretSpan(match.start(group), match.end(group), kind)
                if kind == "aws-access-key":
                    aws.append(span)
                yield span
    for key in aws:
        lo, hi = max(0, key.start - _AWS_NEAR), min(len(text), key.end + _AWS_NEAR)
        for match in _AWS_SECRET.finditer(text, lo, hi):
            if _aws_secret_shape(match.group()):
                yield SecretSpan(match.start(), match.end(), "aws-secret-key")
    if _FOUR_DIGITS.search(text):
        yield from _cards(text)
    if _hinted("password", lowered):
        yield from _passwords(text)


def find_secrets(text: str) -> tuple[SecretSpan, ...]:
    """The secrets in ``text``, in order, non-overlapping (overlaps merge; the most
    specific kind names the merged span)."""
    found = sorted(_candidates(text), key=lambda s: (s.start, -s.end))
    merged: list[SecretSpan] = []
    for span in found:
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            kind = min(last.kind, span.kind, key=_PRIORITY.__getitem__)
            merged[-1] = SecretSpan(last.start, max(last.end, span.end), kind)
        else:
            merged.append(span)
    return tuple(merged)


def redact_secrets(text: str, spans: tuple[SecretSpan, ...] | None = None) -> str:
    """``text`` with every secret (``spans``, found when not given) replaced by its
    :func:`marker`, until no secret is left to find: a marker can open a word boundary
    that lets another secret show (``…HiJkпароль: …``), so the result is screened again
    (a few rounds at most)."""
    spans = find_secrets(text) if spans is None else spans
    for _ in range(_ROUNDS):
        if not spans:
            break
        out: list[str] = []
        at = 0
        for span in spans:
            out += [text[at : span.start], marker(span.kind)]
            at = span.end
        out.append(text[at:])
        text = "".join(out)
        spans = find_secrets(text)
    return text


_ROUNDS = 4


def secret_kinds(text: str) -> tuple[str, ...]:
    """The distinct kinds of secret in ``text``, in order of first appearance."""
    return tuple(dict.fromkeys(span.kind for span in find_secrets(text)))


__all__ = [
    "SecretSpan",
    "card_brand",
    "find_secrets",
    "is_card_number",
    "luhn_valid",
    "marker",
    "redact_secrets",
    "secret_kinds",
]
