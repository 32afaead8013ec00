"""The text pipeline shared by indexing and queries (R33).

- `normalise(text)`: Unicode NFKC, then case folding (full-width ``ＡＰＩ`` -> ``api``).
- `tokens(text)`: ICU word boundaries (`icu4py.breakers.WordBreaker`, locale ``root``,
  which segments Chinese and Japanese with ICU's dictionaries) over the normalised text;
  segments without a letter or digit (spaces, punctuation, emoji) are dropped.
- `tsvector_literal(tokens)` / `tsquery_literal(tokens)`: the tokens as PostgreSQL
  `tsvector` / `tsquery` input. Lexemes are quoted, so PostgreSQL never re-parses or
  re-normalises them: the ICU pipeline is the only tokenizer (the database's own parser
  would split ``1.5`` or ``@e42`` differently and knows no Chinese words).
- `snippet(text, query_tokens)`: a short window around the first match, as plain text and
  as ``parts`` ``[{text, match}]`` so a page can highlight with textContent, never HTML.
- `frame_text(frame_id, body)` / `event_text(content, payload)`: what a document says.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from icu4py.breakers import WordBreaker

LOCALE = "root"
MAX_TOKEN_CHARS = 200
MAX_POSITIONS = 16  # positions kept per lexeme: enough for ranking, keeps vectors small
MAX_VECTOR_BYTES = 1_000_000  # PostgreSQL refuses more than 1 MB of lexemes per tsvector
SNIPPET_CHARS = 200

_WORDLIKE = re.compile(r"[^\W_]")


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    # Case folding can leave a string that is no longer NFKC (rare, e.g. some Greek forms).
    return folded if folded.isascii() else unicodedata.normalize("NFKC", folded)


def _wordlike(segment: str) -> bool:
    return bool(_WORDLIKE.search(segment))


def segments(text: str) -> Iterable[str]:
    """ICU word segments of `text`, unnormalised, covering it exactly (for snippets)."""
    if not text:
        return []
    return WordBreaker(text, LOCALE)


def tokens(text: str) -> list[str]:
    """Index/query tokens of `text`, in order, repeats kept."""
    if not text:
        return []
    # filter() with the compiled pattern runs in C: no Python frame per segment, which keeps
    # the pipeline close to the raw speed of ICU segmentation (see the benchmark).
    return list(filter(_WORDLIKE.search, WordBreaker(normalise(text), LOCALE)))


def _quote(lexeme: str) -> str:
    if len(lexeme) > MAX_TOKEN_CHARS:
        lexeme = lexeme[:MAX_TOKEN_CHARS]
    if "'" in lexeme or "\\" in lexeme:
        lexeme = lexeme.replace("\\", "\\\\").replace("'", "''")
    return "'" + lexeme + "'"


def tsvector_literal(token_list: list[str]) -> str:
    """`'tok':1,7 'other':2`: real positions, at most MAX_POSITIONS per lexeme."""
    positions: dict[str, list[int]] = {}
    add = positions.setdefault
    for index, token in enumerate(token_list, start=1):
        add(token, []).append(index)
    lexemes: Iterable[str] = positions
    if sum(map(len, positions)) * 4 + 8 * len(positions) > MAX_VECTOR_BYTES:
        # PostgreSQL refuses more than 1 MB of distinct lexemes: a giant log keeps its first
        # distinct words (its chunks stay readable by ref).
        kept, size = [], 0
        for token in positions:
            size += len(token[:MAX_TOKEN_CHARS].encode()) + 8
            if size > MAX_VECTOR_BYTES:
                break
            kept.append(token)
        lexemes = kept
    return " ".join(
        [_quote(t) + ":" + ",".join(map(str, positions[t][:MAX_POSITIONS])) for t in lexemes]
    )


def tsquery_literal(token_list: list[str]) -> str:
    """All query tokens AND-ed; empty when the query has no word."""
    unique = list(dict.fromkeys(token_list))
    return " & ".join(_quote(token) for token in unique)


def flatten(value: Any) -> str:
    """Body or payload as plain lines (`key: value`), keys included so they are findable."""
    lines: list[str] = []

    def walk(item: Any, prefix: str) -> None:
        if isinstance(item, dict):
            for key, inner in item.items():
                walk(
                    inner, f"{prefix}{key}: " if not isinstance(inner, (dict, list)) else f"{key}\n"
                )
        elif isinstance(item, list):
            for inner in item:
                walk(inner, prefix)
        elif item is not None:
            lines.append(f"{prefix}{item}")
        elif prefix:
            lines.append(prefix.rstrip())

    walk(value, "")
    return "\n".join(lines)


def frame_text(frame_id: str, body: Any) -> str:
    return f"{frame_id}\n{flatten(body)}"


def event_text(content: str, payload: Any, *, include_payload: bool = True) -> str:
    if payload is None or not include_payload:
        return content
    extra = flatten(payload)
    return f"{content}\n{extra}" if extra else content


def snippet(text: str, query_tokens: Iterable[str], width: int = SNIPPET_CHARS) -> dict[str, Any]:
    """A window of `text` around the first query match: ``{snippet, parts}``."""
    wanted = set(query_tokens)
    pieces: list[tuple[str, bool]] = []
    first = None
    offset = 0
    for segment in segments(text):
        match = bool(wanted) and _wordlike(segment) and normalise(segment) in wanted
        if match and first is None:
            first = offset
        pieces.append((segment, match))
        offset += len(segment)
    start = max(0, (first or 0) - width // 4)
    end = start + width
    parts: list[dict[str, Any]] = []
    position = 0
    for segment, match in pieces:
        seg_end = position + len(segment)
        if seg_end > start and position < end:
            piece = segment[max(0, start - position) : end - position]
            if parts and parts[-1]["match"] == match and not match:
                parts[-1]["text"] += piece
            else:
                parts.append({"text": piece, "match": match})
        position = seg_end
        if position >= end:
            break
    if start > 0:
        parts.insert(0, {"text": "…", "match": False})
    if end < len(text):
        parts.append({"text": "…", "match": False})
    return {"snippet": "".join(p["text"] for p in parts), "parts": parts}
