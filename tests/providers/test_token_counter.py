import pytest

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
