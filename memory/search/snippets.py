"""Snippets for search hits (R33): a short window of a document's text around the first
query match, as plain text and as ``parts`` ``[{text, match}]`` so a page can highlight
with textContent, never HTML.

- `snippet(text, query_tokens, width=SNIPPET_CHARS) -> {snippet, parts}`: segments `text`
  with ICU (the same segments the index saw) and marks those that are, or whose identifier
  parts or Korean syllable pairs are, one of `query_tokens`.
- `window(text, first) -> (text, cut)`: WINDOW_CHARS of `text` starting WINDOW_BEFORE
  characters before the first occurrence of `first` (case-insensitive), and whether the
  start was cut (the database cuts event windows the same way, `memory.search.ranking`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory.search.textindex import (
    _ASCII_WORD_ANYCASE,
    _EMOJI,
    _NEEDS_PARTS,
    _cased_parts,
    _word_parts,
    _wordlike,
    normalise,
    segments,
)

SNIPPET_CHARS = 200
WINDOW_BEFORE = 60
WINDOW_CHARS = 240


def window(text: str, first: str) -> tuple[str, bool]:
    """WINDOW_CHARS of `text` around the first `first` (lower case), and whether cut."""
    found = text.lower().find(first)
    start = max(0, found - WINDOW_BEFORE) if found >= 0 else 0
    return text[start : start + WINDOW_CHARS], start > 0


def _matches(segment: str, wanted: set[str]) -> bool:
    if segment.isascii():
        word = segment.lower()
        if word in wanted:
            return True
        return _NEEDS_PARTS.search(segment) is not None and any(
            p in wanted for p in _cased_parts(segment)
        )
    if not _wordlike(segment):
        found = _EMOJI.match(segment)
        return found is not None and found.group() in wanted
    word = normalise(segment)
    return word in wanted or any(p in wanted for p in _word_parts(word))


def _ascii_segments(text: str) -> Iterable[str]:
    """ICU's word segments of ASCII text (the tokenizer's tested fast path), with the text
    between words as one piece each: the same snippet, without a break iterator."""
    position = 0
    for found in _ASCII_WORD_ANYCASE.finditer(text):
        if found.start() > position:
            yield text[position : found.start()]
        yield found.group()
        position = found.end()
    if position < len(text):
        yield text[position:]


def snippet(text: str, query_tokens: Iterable[str], width: int = SNIPPET_CHARS) -> dict[str, Any]:
    """A window of `text` around the first query match: ``{snippet, parts}``."""
    wanted = set(query_tokens)
    pieces: list[tuple[str, bool]] = []
    first = None
    offset = 0
    for segment in _ascii_segments(text) if text.isascii() else segments(text):
        match = bool(wanted) and _matches(segment, wanted)
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
