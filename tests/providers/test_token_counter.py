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
