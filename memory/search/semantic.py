"""What a document means, for ordering search's best lexical matches (R33).

How it works: docs/internals.md, section `memory/search/semantic.py`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

MIN_WORDS = 3  # queries of fewer words (function words aside) keep the lexical order
HEAD = 50  # the first HEAD lexical hits are reordered by meaning; the rest keep their order
WEIGHT = 1.25
EMBED_CHARS = 4000
DIMENSIONS = 256


def enabled() -> bool:
    """Whether documents are embedded and questions reordered (MORPHZ_SEARCH_MEANING)."""
    return bool(getattr(settings, "MORPHZ_SEARCH_MEANING", True))


def is_question(q: str, words: int) -> bool:
    """Whether a query is reordered by meaning: MIN_WORDS words or more that are not
    function words (`words`), written apart. An identifier, a path or a hyphenated name is a
    lookup however many parts it has (`payment-service-timeout`); a word or two likewise."""
    return words >= MIN_WORDS and len(q.split()) >= MIN_WORDS


_model: Any = None
_loading = threading.Lock()


def _wordllama() -> Any:
    """The model, loaded once per process from the files inside the `wordllama` package
    (its default lookup would try to download the tokenizer). Its tokenizer pads no more:
    `embeddings` pools each text's tokens itself."""
    global _model
    if _model is None:
        with _loading:
            if _model is None:
                import wordllama
                from wordllama import WordLlama

                model = WordLlama.load(
                    cache_dir=Path(wordllama.__file__).parent, disable_download=True
                )
                model.tokenizer.no_padding()
                _model = model
    return _model


def _encode(matrix: np.ndarray) -> list[bytes]:
    norms = np.linalg.norm(matrix, axis=1)
    return [
        (row / norm).astype(np.float16).tobytes() if norm > 0 and np.isfinite(norm) else b""
        for row, norm in zip(matrix, norms, strict=True)
    ]


BUNDLED = "wordllama:l2_supercat_256"
ENDPOINT_TIMEOUT = 30.0  # seconds an embeddings endpoint may take for one batch


def model_name() -> str:
    """The embedder in use, as each document records it (`SearchDocument.embedding_model`):
    BUNDLED, or ``openai:<model>@<url>`` for an OpenAI-compatible endpoint
    (MORPHZ_EMBEDDINGS_URL and MORPHZ_EMBEDDINGS_MODEL; MORPHZ_EMBEDDINGS_KEY its key).
    Vectors of two models never compare: a change re-embeds in the background."""
    url = getattr(settings, "MORPHZ_EMBEDDINGS_URL", "")
    if not url:
        return BUNDLED
    return f"openai:{settings.MORPHZ_EMBEDDINGS_MODEL}@{url.rstrip('/')}"


def _endpoint(texts: Sequence[str]) -> list[bytes]:
    """Embeddings from an OpenAI-compatible endpoint: POST <url>/embeddings with
    ``{"model", "input": [...]}``, answered ``{"data": [{"index", "embedding"}]}``; a blank
    text is not sent (b"")."""
    import httpx

    url = settings.MORPHZ_EMBEDDINGS_URL.rstrip("/") + "/embeddings"
    wanted = [n for n, text in enumerate(texts) if text.strip()]
    out = [b""] * len(texts)
    if not wanted:
        return out
    key = getattr(settings, "MORPHZ_EMBEDDINGS_KEY", "")
    response = httpx.post(
        url,
        json={"model": settings.MORPHZ_EMBEDDINGS_MODEL, "input": [texts[n] for n in wanted]},
        headers={"Authorization": f"Bearer {key}"} if key else {},
        timeout=ENDPOINT_TIMEOUT,
    )
    response.raise_for_status()
    rows = sorted(response.json()["data"], key=lambda row: row["index"])
    matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
    for n, blob in zip(wanted, _encode(matrix), strict=True):
        out[n] = blob
    return out


def embeddings(texts: Sequence[str]) -> list[bytes]:
    """Each text's embedding: float16 values of unit length (DIMENSIONS for the bundled
    model, 512 bytes; what the endpoint gives otherwise, `model_name`), or b"" when the
    model knows none of its tokens (or the text is blank).

    The model's own `embed` averages the token embeddings of a batch padded to its longest
    text; summing each text's tokens alone gives the same direction (cosine 1.0000 on the
    STATE-Bench documents) 2.6 times faster, so indexing keeps up."""
    if not texts:
        return []
    if getattr(settings, "MORPHZ_EMBEDDINGS_URL", ""):
        return _endpoint([text[:EMBED_CHARS] for text in texts])
    model = _wordllama()
    table = model.embedding
    encoded = model.tokenizer.encode_batch(
        [text[:EMBED_CHARS] for text in texts], add_special_tokens=False
    )
    sums = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
    for n, encoding in enumerate(encoded):
        ids = np.asarray(encoding.ids, dtype=np.int64)
        if ids.size and not texts[n][:EMBED_CHARS].isspace():
            sums[n] = table[np.clip(ids, 0, table.shape[0] - 1)].sum(axis=0)
    return _encode(sums)


def query_embedding(q: str) -> bytes:
    """The query's embedding, as `embeddings` stores a document's; spacing does not count
    (`late  order` is `late order`)."""
    return embeddings([" ".join(q.split())])[0]


def _vector(blob: bytes | memoryview | None, size: int | None = None) -> np.ndarray | None:
    """A stored embedding as float32; None when absent or not of `size` bytes (a vector of
    another model, written before a change of embedder was re-embedded)."""
    if not blob or (size is not None and len(blob) != size):
        return None
    return np.frombuffer(bytes(blob), dtype=np.float16).astype(np.float32)


NEAR = 20  # documents found by meaning alone, at most, per question
NEAR_SCAN = 5000  # among the newest documents of the context (see `memory.search.near`)
NEAR_MIN = 0.35  # cosine a document must reach to be found by meaning alone


def nearest(
    rows: Sequence[tuple[int, bytes]], query: bytes, count: int = NEAR
) -> list[tuple[int, bytes]]:
    """The `count` rows (id, embedding) closest to the query, of cosine NEAR_MIN or more,
    closest first."""
    wanted = _vector(query)
    if wanted is None or not rows:
        return []
    usable = [(pk, blob) for pk, blob in rows if len(blob) == len(query)]
    if not usable:
        return []
    matrix = np.frombuffer(b"".join(blob for _, blob in usable), dtype=np.float16)
    cosines = matrix.reshape(len(usable), wanted.size).astype(np.float32) @ wanted
    order = np.argsort(-cosines, kind="stable")[:count]
    return [usable[n] for n in order if cosines[n] >= NEAR_MIN]


def rerank(
    head: Sequence[tuple[float, bool, bytes | memoryview | None]], query: bytes, lead: float
) -> list[tuple[int, float]]:
    """The head's new order: (index into `head`, score), best first.

    `head`: the lexical ranking's first documents, best first, as (lexical score, whether
    it is the frame named by the query, stored embedding or None). The named frame stays
    first and scores `lead` above the best other document (as in the lexical ranking); the
    others score as the module says, ties in their lexical order."""
    wanted = _vector(query)
    plain = [n for n, (_, exact, _) in enumerate(head) if not exact]
    best = max((head[n][0] for n in plain), default=0.0)
    scored = []
    for n in plain:
        score, _, blob = head[n]
        vector = _vector(blob, len(query))
        if wanted is not None and vector is not None and best > 0:
            score += WEIGHT * best * max(float(vector @ wanted), 0.0)
        scored.append((n, score))
    scored.sort(key=lambda pair: -pair[1])  # stable: ties keep the lexical order
    top = scored[0][1] if scored else 0.0
    named = [(n, max(head[n][0], top + lead)) for n, (_, exact, _) in enumerate(head) if exact]
    return named + scored
