import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.errors import ConfigError
from kronika.providers.tokens import TiktokenCounter


def test_counts_like_tiktoken():
    counter = TiktokenCounter()
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    # special tokens are ordinary text, never an error
    assert counter.count("<|endoftext|>") > 1


def test_other_bundled_encoding():
    assert TiktokenCounter("o200k_base").count("hello world") == 2


def test_unknown_encoding_is_a_config_error_naming_choices():
    counter = TiktokenCounter("p50k_base")  # construction stays cheap and lazy
    with pytest.raises(ConfigError, match="cl100k_base, o200k_base"):
        counter.count("x")


_COUNTERS: dict[str, TiktokenCounter] = {}


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(
        st.text(alphabet=st.sampled_from(list("ab Zó9.,-*#<>!\t '\r\n\u00a0ść—🙂")), max_size=40),
        min_size=1,
        max_size=30,
    )
)
def test_a_long_text_counted_line_by_line_counts_as_a_whole(
    encoding: str, lines: list[str]
) -> None:
    counter = _COUNTERS.setdefault(encoding, TiktokenCounter(encoding))
    text = "\n".join(lines) * 3
    whole = len(counter._load().encode_ordinary(text))  # noqa: SLF001 - the reference count
    assert counter.count(text) == whole


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcXYZ019+/=ż漢 \n.", min_size=0, max_size=1500))
def test_words_of_ordinary_length_count_exactly_and_long_runs_never_fewer(text: str) -> None:
    counter = _COUNTERS.setdefault("cl100k_base", TiktokenCounter("cl100k_base"))
    exact = len(counter._load().encode_ordinary(text))
    if all(len(word) <= 256 for word in text.split()):
        assert counter.count(text) == exact
    else:
        assert exact <= counter.count(text) <= exact + len(text) // 64 + 1


def test_counting_is_linear_on_text_without_spaces() -> None:
    """20,000 letters without a space took 6 s to count whole (byte-pair merging costs
    the square of a piece's length); a million now take well under a second or two."""
    import random
    import string
    import time

    counter = TiktokenCounter()
    counter.count("warm up")
    rng = random.Random(3)
    blob = "".join(rng.choice(string.ascii_letters) for _ in range(1_000_000))
    start = time.monotonic()
    tokens = counter.count(blob)
    assert time.monotonic() - start < 10.0  # whole, it would take hours
    assert tokens > 500_000  # about 0.7 a letter, estimated past the first 65,536
    short = blob[:20_000]
    start = time.monotonic()
    assert counter.count(short) >= len(counter._load().encode_ordinary(short[:2000])) * 9
    assert time.monotonic() - start < 3.0  # whole, 6 s on a quiet machine
