"""The text pipeline shared by indexing and queries (R33).

- `normalise(text)`: Unicode NFKC, then case folding (full-width ``ＡＰＩ`` -> ``api``).
- `tokens(text)`: ICU word boundaries (`icu4py.breakers.WordBreaker`, locale ``root``,
  which segments Chinese and Japanese with ICU's dictionaries) over the normalised text;
  segments without a letter or digit (spaces, punctuation, emoji) are dropped. ASCII
  stretches (and common typographic punctuation) take a regular-expression fast path that
  gives exactly ICU's segments there (tested against ICU); `icu_tokens(text)` is the
  reference.
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


def icu_tokens(text: str) -> list[str]:
    """Index/query tokens of `text` straight from ICU: the definition `tokens` must match."""
    if not text:
        return []
    # filter() with the compiled pattern runs in C: no Python frame per segment.
    return list(filter(_WORDLIKE.search, WordBreaker(normalise(text), LOCALE)))


# ASCII stretches skip ICU: for ASCII, ICU's word rules (UAX #29 as ICU implements them for
# the root locale) are exactly this pattern: runs of letters, digits and `_` (WB5, WB8-10,
# WB13a/b), joined across one `:` `.` `'` between two letters (WB6/7) or one `,` `;` `.` `'`
# between two digits (WB11/12). The curly apostrophes join like `'` (MidNumLet), and common
# non-ASCII punctuation and symbols that ICU always cuts on both sides (dashes, quotes,
# arrows, ...: checked against ICU when this module loads) split like ASCII punctuation, so
# English text with typographic punctuation stays on the fast path too. Anything else goes
# to ICU. tests/memory/test_search_text_pipeline.py checks `tokens` against ICU on fuzzed
# text. Iterating ICU segments from Python was the largest single cost of indexing.
def _icu_splits(char: str) -> bool:
    """ICU cuts before and after `char` whatever surrounds it, and it is not a word."""
    if _WORDLIKE.search(char):
        return False
    cases = {f"a{char}b": ["a", char, "b"], f"1{char}2": ["1", char, "2"]}
    cases.update({f"_{char}_": ["_", char, "_"], f"{char}{char}": [char, char]})
    cases.update({f" {char} ": [" ", char, " "], f"é{char}中": ["é", char, "中"]})
    return all(list(WordBreaker(text, LOCALE)) == want for text, want in cases.items())


def _icu_joins(char: str) -> bool:
    """ICU joins two letters and two digits across `char`, like `'`."""
    return all(list(WordBreaker(text, LOCALE)) == [text] for text in (f"a{char}b", f"1{char}2"))


_SEPARATOR_CANDIDATES = (
    "\u00a7\u00b0\u00b1\u00b6\u00d7\u00f7"
    + "".join(map(chr, range(0x2010, 0x2016)))  # hyphens and dashes
    + "\u201c\u201d\u201e\u201f\u2020\u2021\u2022\u2030\u2032\u2033"
    + "".join(map(chr, range(0x2190, 0x2200)))  # arrows
    + "".join(map(chr, range(0x2200, 0x2300)))  # mathematical operators
    + "\u2605\u2606\u25a0\u25a1\u25b2\u25b6\u25bc\u25c0\u25cf\u25cb"
)
_SEPARATORS = "".join(c for c in _SEPARATOR_CANDIDATES if _icu_splits(c))
_APOSTROPHES = "".join(c for c in "\u2018\u2019" if _icu_joins(c))
_ASCII_WORD = re.compile(
    rf"[a-z0-9_]+(?:(?:(?<=[a-z])[:.'{_APOSTROPHES}](?=[a-z])"
    rf"|(?<=[0-9])[,;.'{_APOSTROPHES}](?=[0-9]))[a-z0-9_]+)*"
)
_ASCII_WORDLIKE = re.compile(r"[a-z0-9]")
# Text outside the fast path goes to ICU in whitespace-delimited chunks: no UAX #29 rule
# joins across an ASCII space, tab or line break, so cutting there changes no boundary.
# (Found with plain searches, linear in the text: no pattern that could backtrack.)
_NON_ASCII = re.compile(rf"[^\x00-\x7f{_SEPARATORS}{_APOSTROPHES}]")
_SPACE = re.compile(r"[ \t\n\r\f\v]")
_SPACES = " \t\n\r\f\v"


def _ascii_tokens(folded: str) -> list[str]:
    return list(filter(_ASCII_WORDLIKE.search, _ASCII_WORD.findall(folded)))


def tokens(text: str) -> list[str]:
    """Index/query tokens of `text`, in order, repeats kept (= `icu_tokens(text)`)."""
    if not text:
        return []
    if text.isascii():
        return _ascii_tokens(text.lower())  # NFKC is the identity, casefold is lower()
    folded = normalise(text)
    found: list[str] = []
    position = 0
    while True:
        other = _NON_ASCII.search(folded, position)
        if other is None:
            found += _ascii_tokens(folded[position:])
            return found
        start = max(position, max(folded.rfind(c, position, other.start()) for c in _SPACES) + 1)
        space = _SPACE.search(folded, other.end())
        end = space.start() if space is not None else len(folded)
        if start > position:
            found += _ascii_tokens(folded[position:start])
        found += filter(_WORDLIKE.search, WordBreaker(folded[start:end], LOCALE))
        position = end


def _quote(lexeme: str) -> str:
    if len(lexeme) > MAX_TOKEN_CHARS:
        lexeme = lexeme[:MAX_TOKEN_CHARS]
    if "'" in lexeme or "\\" in lexeme:
        lexeme = lexeme.replace("\\", "\\\\").replace("'", "''")
    return "'" + lexeme + "'"


def tsvector_literal(token_list: list[str]) -> str:
    """`'tok':1,7 'other':2`: real positions, at most MAX_POSITIONS per lexeme."""
    positions: dict[str, list[int]] = {}
    get = positions.get
    for index, token in enumerate(token_list, start=1):
        found = get(token)
        if found is None:
            positions[token] = [index]
        elif len(found) < MAX_POSITIONS:
            found.append(index)
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
    quote = _quote
    return " ".join([quote(t) + ":" + ",".join(map(str, positions[t])) for t in lexemes])


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
