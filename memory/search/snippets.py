"""Snippets for search hits (R33): a short window of a document's text around the first
query match, as plain text and as ``parts`` ``[{text, match}]`` so a page can highlight
with textContent, never HTML.

How it works: docs/internals.md, section `memory/search/snippets.py`."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

from memory.search import languages, vectors
from memory.search.format_characters import without_format_characters
from memory.search.textindex import (
    ASCII_WORD_ANYCASE,
    NEEDS_PARTS,
    cased_parts,
    emoji,
    emoji_parts,
    normalise,
    segments,
    word_parts,
    wordlike,
)
from memory.shapes.nodes import Snippet, SnippetPart

SNIPPET_CHARS = 200
WINDOW_BEFORE = 60
WINDOW_CHARS = 240
_STRAIGHT = str.maketrans("\u2018\u2019", "''")  # one character for one: offsets hold


def window(text: str, first: str, roots: Iterable[str] = ()) -> tuple[str, bool, bool]:
    """WINDOW_CHARS of `text` around the first `first` (lower case), else around the first
    of its stems' `roots` (`stem_roots`), and whether it was cut before and after
    (`snippet`'s `cut_before`, `cut_after`)."""
    lowered = text.lower()
    found = word_at(lowered, first)
    if found < 0:
        found = min((at for root in roots if (at := lowered.find(root)) >= 0), default=-1)
    start = max(0, found - WINDOW_BEFORE) if found >= 0 else 0
    return text[start : start + WINDOW_CHARS], start > 0, start + WINDOW_CHARS < len(text)


def word_at(lowered: str, word: str) -> int:
    """Where `word` first occurs in `lowered` as a word of its own, else where it first
    occurs at all (-1: nowhere): `art` opens at the word, not inside an earlier `restart`
    (which shows no match), and `user` still opens inside `createuser` (an identifier's
    part). Apostrophes count as one (`don't` opens at `don’t`: the same word, as the index
    reads it). `ranking_sql.PAGE` finds an event's window the same way."""
    lowered, word = lowered.translate(_STRAIGHT), word.translate(_STRAIGHT)
    alone = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", lowered)
    return alone.start() if alone else lowered.find(word)


def stem_roots(word: str, codes: frozenset[str]) -> list[str]:
    """Where a window opens when `word` itself is nowhere in the text: the roots of its
    stems (`vectors.stem_lexemes`; ``annuler`` -> ``annul``, found in ``annulé``), each
    once. Only where to look: a stem found there is marked only if the index's rule says
    so (`snippet`). A root the word's other forms do not start with (German ``kundig``
    of ``Kündigungen``) is not found; the window then opens at the text's start."""
    return list(
        dict.fromkeys(languages.unmarked(lexeme)[1] for lexeme in vectors.stem_lexemes(word, codes))
    )


def word_pattern(word: str) -> str:
    """`word` as a PostgreSQL regular expression matching it literally, apostrophes as
    `word_at` reads them: each ASCII character but a letter, digit or `_` escaped (no other
    is special there). Built here, not by `regexp_replace` in SQL: that call, with its
    `[^[:alnum:]_]` class over UTF-8, once spun uninterruptibly in PostgreSQL 16.2's
    regex engine (a search statement that not even pg_terminate_backend stopped)."""
    return "".join(
        "\\" + c if c.isascii() and not (c.isalnum() or c == "_") else c
        for c in word.translate(_STRAIGHT)
    )


def _stemmed(word: str, stems: frozenset[str], codes: frozenset[str]) -> bool:
    """Whether `word` is another form of a query word the document was found by: the word
    is one of the held stem lexemes (``cancel``), or the index stores a stem of it that is
    (`vectors.word_stems`, in the languages its text was read as: `codes`)."""
    return word in stems or not stems.isdisjoint(vectors.word_stems(word, codes))


def _matches(segment: str, wanted: set[str], stems: frozenset[str], codes: frozenset[str]) -> bool:
    if segment.isascii():
        word = segment.lower()
        if word in wanted or (stems and _stemmed(word, stems, codes)):
            return True
        return NEEDS_PARTS.search(segment) is not None and any(
            p in wanted for p in cased_parts(segment)
        )
    if not wordlike(segment):  # emoji: a flag or a ZWJ sequence is one, its parts count too
        return any(
            symbol in wanted or any(p in wanted for p in emoji_parts(symbol))
            for symbol in emoji(segment)
        )
    word = normalise(segment)
    if stems and _stemmed(word, stems, codes):
        return True
    return word in wanted or any(p in wanted for p in word_parts(word))


def _joined(pieces: Iterable[str]) -> list[str]:
    """ICU's segments with a word split only by invisible format characters (``quan`` +
    zero-width space + ``tum``) joined again: the index drops them before segmenting
    (`format_characters`), so the word it holds is ``quantum`` and the snippet marks it."""
    out: list[str] = []
    gap = ""  # format characters after the last word, not yet placed
    for segment in pieces:
        if out and wordlike(out[-1]) and not without_format_characters(segment):
            gap += segment
            continue
        if gap and wordlike(segment):
            out[-1] += gap + segment
        else:
            out += [gap, segment] if gap else [segment]
        gap = ""
    return out + ([gap] if gap else [])


def _ascii_segments(text: str) -> Iterable[str]:
    """ICU's word segments of ASCII text (the tokenizer's tested fast path), with the text
    between words as one piece each: the same snippet, without a break iterator."""
    position = 0
    for found in ASCII_WORD_ANYCASE.finditer(text):
        if found.start() > position:
            yield text[position : found.start()]
        yield found.group()
        position = found.end()
    if position < len(text):
        yield text[position:]


def _bounds(
    text: str,
    pieces: list[tuple[str, bool]],
    first: int | None,
    width: int,
    cut_before: bool,
    cut_after: bool,
) -> tuple[int, int]:
    """Where a snippet of about `width` around the first match (at offset `first`) starts
    and ends: never inside a word (or an emoji sequence), spaces at either end left out.
    Between words it may cut anywhere, so ICU's segments and the ASCII path's (which keeps
    the text between two words as one piece) give the same snippet. The edge of a text cut
    out of a longer one (`cut_before`, `cut_after`) may be inside a word: no place to cut
    there. Only a word longer than the snippet is cut inside."""
    starts = [0]
    for segment, _ in pieces:
        starts.append(starts[-1] + len(segment))
    total = starts[-1]

    def can_cut(at: int) -> bool:
        if at == 0:
            return not cut_before or first == 0
        if at == total:
            return not cut_after
        n = bisect_right(starts, at) - 1
        segment = pieces[n][0]
        return starts[n] == at or (segment.isascii() and not wordlike(segment))

    low = max(0, (first or 0) - width // 4)
    last = min(total, low + width if first is None else first)
    start = next((at for at in range(low, last + 1) if can_cut(at)), low)
    while start < last and text[start].isspace() and can_cut(start + 1):
        start += 1
    high = start + width
    if high >= total and can_cut(total):
        return start, total
    least = start + 1 if first is None else first + 1
    end = next((at for at in range(min(high, total), least - 1, -1) if can_cut(at)), None)
    if end is None:
        return start, min(high, total)
    while end > least and text[end - 1].isspace() and can_cut(end - 1):
        end -= 1
    return start, end


def snippet(
    text: str,
    query_tokens: Iterable[str],
    width: int = SNIPPET_CHARS,
    *,
    cut_before: bool = False,
    cut_after: bool = False,
    stems: Iterable[str] = (),
) -> Snippet:
    """A window of `text` around the first query match: ``{snippet, parts}``, cut at word
    boundaries (ICU's segments: no word is shown in part), with ``…`` where it was cut.
    `cut_before` / `cut_after`: `text` itself was cut out of a longer text there (`window`),
    so its first / last segment may be a piece of a word and is not shown. `stems`: the
    stem lexemes of the query (`vectors.stem_lexemes`) the document holds: a word whose
    index stems are among them is another form of a query word, and matches too. A marked
    stem (``=fr:annul``) is held only by a text read as its language, so words are stemmed
    in those languages alone, as the index stemmed them."""
    wanted = set(query_tokens)
    held = frozenset(stems)
    codes = frozenset(code for lexeme in held if (code := languages.unmarked(lexeme)[0]))
    pieces: list[tuple[str, bool]] = []
    first = None
    offset = 0
    for segment in _ascii_segments(text) if text.isascii() else _joined(segments(text)):
        match = bool(wanted or held) and _matches(segment, wanted, held, codes)
        if match and first is None:
            first = offset
        pieces.append((segment, match))
        offset += len(segment)
    start, end = _bounds(text, pieces, first, width, cut_before, cut_after)
    parts: list[SnippetPart] = []
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
    if start > 0 or cut_before:
        parts.insert(0, {"text": "…", "match": False})
    if end < len(text) or cut_after:
        parts.append({"text": "…", "match": False})
    return {"snippet": "".join(p["text"] for p in parts), "parts": parts}
