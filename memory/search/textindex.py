"""The text pipeline shared by indexing and queries (R33).

How it works: docs/internals.md, section `memory/search/textindex.py`."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from itertools import chain

from icu4py.breakers import WordBreaker

from memory.search.format_characters import without_format_characters

LOCALE = "root"
SECONDARY = "~"  # marks a secondary lexeme (see `index_terms`)

_WORDLIKE = re.compile(r"[^\W_]")


def _visible(text: str) -> str:
    """`text` without its invisible format characters, NFKC, the case kept. Emoji are read
    from the text as written (`emoji`): ZWJ sequences and tag flags stay whole there."""
    return unicodedata.normalize("NFKC", without_format_characters(text))


# Unicode's default case folding writes a capital dotted I (U+0130, Turkish `İstanbul`) as
# `i` and a combining dot above (U+0307), which no typed `istanbul` holds; the dot adds
# nothing to a lower-case i, so it is dropped there (`İstanbul` and `istanbul` are one word).
_DOTTED_I = "i\u0307"


def _case_folded(visible: str) -> str:
    folded = visible.casefold()
    if folded.isascii():
        return folded
    # Case folding can leave a string that is no longer NFKC (rare, e.g. some Greek forms).
    return unicodedata.normalize("NFKC", folded).replace(_DOTTED_I, "i")


def normalise(text: str) -> str:
    """Invisible format characters dropped, Unicode NFKC, then case folding (``ＡＰＩ`` ->
    ``api``), NFKC again when needed."""
    return _case_folded(_visible(text))


def wordlike(segment: str) -> bool:
    """True when the segment holds a letter or digit (a word, not punctuation)."""
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
# to ICU. tests/memory/search/test_text_pipeline.py checks `tokens` against ICU on fuzzed
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
        end = _chunk_end(folded, other.end())
        if start > position:
            found += _ascii_tokens(folded[position:start])
        found += filter(_WORDLIKE.search, WordBreaker(folded[start:end], LOCALE))
        position = end


# -- terms: tokens plus their parts (identifiers, Korean), and emoji ---------------------------
#
# Identifiers: `test_create_user`, `memory.search`, `a::b`, `v1.2.3` and `createUser` are
# one token each; their parts are indexed right after them (positions follow), so both the
# whole and `create user` find them, and a query token is matched as itself or as the
# phrase of its parts. camelCase needs the original case, so the ASCII pass keeps it.
#
# Korean: ICU keeps a word with its particle (`결과를`), so a noun alone (`결과`) was not
# found. Korean words are indexed with their syllable pairs (`결과` `과를`): chosen by
# measurement over a morphological analyser (kiwipiepy), which found the same documents on
# the benchmark's Korean queries but tokenised ~20 thousand characters a second against
# millions (bench/bench_korean_tokenizer.py, BENCHMARKS.md). Chinese, Japanese and Thai keep
# ICU's dictionary words (京都 does not match inside 東京都).

MAX_PARTS = 16
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+|[^\uac00-\ud7a3]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_SPLIT = re.compile(r"[_.:]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_]+")
# Emoji (pictographs, dingbats, flags), each whole as ICU segments it: a flag (two regional
# indicators), a subdivision flag (black flag and tag letters), a ZWJ sequence (family,
# profession: pictographs joined by U+200D). Variation selectors and skin tones are part of
# the match and dropped from the symbol (`👍🏽` is indexed as `👍`).
_PICTOGRAPH = (
    "[\U0001f000-\U0001f3fa\U0001f400-\U0001faff\u2600-\u27bf\u2b05-\u2b55\u231a\u231b"
    "\u23e9-\u23fa\u3297\u3299]"
)
_PRESENTATION = "[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]"  # variation selectors, skin tones
_EMOJI = re.compile(
    "[\U0001f1e6-\U0001f1ff]{2}"
    "|\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"
    f"|{_PICTOGRAPH}{_PRESENTATION}*(?:\u200d{_PICTOGRAPH}{_PRESENTATION}*)*"
)
_NOT_SYMBOL = re.compile(_PRESENTATION)
ZWJ = "\u200d"
ASCII_WORD_ANYCASE = re.compile(_ASCII_WORD.pattern, re.IGNORECASE)


def parts(token: str, original: str | None = None) -> list[str]:
    """The pieces `token` is also indexed as (empty when it is one piece).

    `original` is the token before case folding (for camelCase), when known."""
    if original is not None and original != token and len(original) == len(token):
        return list(cased_parts(original))
    return list(word_parts(token))


@functools.lru_cache(maxsize=65536)
def word_parts(token: str) -> tuple[str, ...]:
    """Parts of a case-folded token (words repeat: cached)."""
    found: list[str] = []
    if _HANGUL.search(token):
        if _ALL_HANGUL.match(token):
            found = [token[i : i + 2] for i in range(len(token) - 1)]
        else:
            for run in _HANGUL_RUN.findall(token):
                if _HANGUL.match(run):
                    found += [run[i : i + 2] for i in range(max(1, len(run) - 1))]
                else:
                    found += [p for p in _CAMEL.findall(run) if _WORDLIKE.search(p)]
    elif _SPLITTABLE.search(token):
        found = _split_parts(token)
    if len(found) <= 1 and (not found or found[0] == token):
        return ()
    return tuple(found[:MAX_PARTS])


@functools.lru_cache(maxsize=65536)
def cased_parts(original: str) -> tuple[str, ...]:
    """Parts of an ASCII token as written (camelCase humps are seen here)."""
    token = original.lower()
    if not _SPLITTABLE.search(token) and not _HUMP.search(original):
        return ()
    found = _split_parts(original)
    if len(found) <= 1 and (not found or found[0] == token):
        return ()
    return tuple(found[:MAX_PARTS])


def _split_parts(source: str) -> list[str]:
    found: list[str] = []
    for piece in _SPLIT.split(source):
        if not piece:
            continue
        if "," in piece or ";" in piece or "'" in piece or "’" in piece:
            found.append(piece.lower())  # 1,000 and don't stay whole
        else:
            found += [p.lower() for p in _CAMEL.findall(piece)]
    return found


_ALL_HANGUL = re.compile(r"[\uac00-\ud7a3]+\Z")
_SPLITTABLE = re.compile(r"[^_.:][_.:]+[^_.:]")
_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
NEEDS_PARTS = re.compile(r"[A-Za-z0-9][_.:]+[A-Za-z0-9]|[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")


@functools.lru_cache(maxsize=65536)
def _ascii_pair(match: str) -> tuple[str, tuple[str, ...]] | None:
    token = match.lower()
    if not _ASCII_WORDLIKE.search(token):
        return None
    return token, (cased_parts(match) if match != token else word_parts(token))


def _ascii_pairs(text: str, found: list[tuple[str, tuple[str, ...]]]) -> None:
    if not NEEDS_PARTS.search(text):
        found += [(t, ()) for t in _ascii_tokens(text.lower())]
        return
    pair = _ascii_pair
    found += filter(None, map(pair, ASCII_WORD_ANYCASE.findall(text)))


def _icu_pair(word: str) -> tuple[str, tuple[str, ...]]:
    return word, word_parts(word)


# A run of ASCII this long after a space ends an ICU chunk (the fast path takes it); shorter
# ASCII stretches between non-ASCII words stay in the chunk: one ICU call per paragraph of
# Korean, not one per word (creating a break iterator is the expensive part).
_ASCII_STRETCH = re.compile(r"[ \t\n\r\f\v](?=[\x00-\x7f]{80})")


def _chunk_end(folded: str, after: int) -> int:
    stretch = _ASCII_STRETCH.search(folded, after)
    return stretch.start() if stretch is not None else len(folded)


def _pairs(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(token, parts) for every token of `text` in order, then (emoji, ())."""
    found: list[tuple[str, tuple[str, ...]]] = []
    if not text:
        return found
    if text.isascii():
        _ascii_pairs(text, found)
        return found
    cased = _visible(text)
    folded = _case_folded(cased)
    if len(cased) != len(folded):
        cased = folded
    position = 0
    while True:
        other = _NON_ASCII.search(folded, position)
        if other is None:
            chunk = cased[position:]
            _ascii_pairs(chunk if chunk.isascii() else folded[position:], found)
            break
        start = max(position, max(folded.rfind(c, position, other.start()) for c in _SPACES) + 1)
        end = _chunk_end(folded, other.end())
        if start > position:
            chunk = cased[position:start]
            _ascii_pairs(chunk if chunk.isascii() else folded[position:start], found)
        found += map(_icu_pair, filter(_WORDLIKE.search, WordBreaker(folded[start:end], LOCALE)))
        position = end
    found += [(symbol, emoji_parts(symbol)) for symbol in emoji(text)]
    return found


def emoji(text: str) -> list[str]:
    """The emoji of `text`, in order, each whole (`_EMOJI`): a pictograph or dingbat, a flag
    (``🇺🇸``, not ``🇺`` ``🇸``), a subdivision flag, a ZWJ sequence (``👨‍👩‍👧``), without
    variation selectors or skin tones."""
    return [_NOT_SYMBOL.sub("", found) for found in _EMOJI.findall(text)]


@functools.lru_cache(maxsize=4096)
def emoji_parts(symbol: str) -> tuple[str, ...]:
    """The emoji a ZWJ sequence joins (``👩‍💻`` -> ``👩`` ``💻``), indexed as its parts like
    an identifier's: ``💻`` finds ``👩‍💻`` as a part. Empty for any other emoji (a flag's
    regional indicators are no symbols of their own)."""
    if ZWJ not in symbol:
        return ()
    found = [piece for piece in symbol.split(ZWJ) if piece]
    return tuple(found[:MAX_PARTS]) if len(found) > 1 else ()


def terms(text: str) -> list[str]:
    """Index terms of `text`: each token, then its parts; the emoji at the end."""
    if text.isascii():
        if not NEEDS_PARTS.search(text):
            return _ascii_tokens(text.lower())
        return list(chain.from_iterable(map(_ascii_flat, ASCII_WORD_ANYCASE.findall(text))))
    return list(chain.from_iterable((token, *token_parts) for token, token_parts in _pairs(text)))


@functools.lru_cache(maxsize=65536)
def _ascii_flat(match: str) -> tuple[str, ...]:
    pair = _ascii_pair(match)
    return () if pair is None else (pair[0], *pair[1])


@functools.lru_cache(maxsize=65536)
def _ascii_marked(match: str) -> tuple[str, ...]:
    if match.lower() == match and not _SEPARATED_KEEP.search(match):
        # Lower-case (a giant log's ids, tags, numbers): the parts are its runs of letters
        # and of digits, when it is split at all; the same as `_ascii_pair`, in fewer steps
        # (a 3.5 MB log has ~50,000 distinct tokens, each seen here once).
        if not _ASCII_WORDLIKE.search(match):
            return ()
        if not _SPLITTABLE.search(match):
            return (match,)
        found = _LOWER_RUNS.findall(match)
        if len(found) <= 1 and (not found or found[0] == match):
            return (match,)
        return (match, *[SECONDARY + p for p in found[:MAX_PARTS]])
    pair = _ascii_pair(match)
    if pair is None:
        return ()
    return (pair[0], *[SECONDARY + p for p in pair[1]])


_LOWER_RUNS = re.compile(r"[a-z]+|[0-9]+")
_SEPARATED_KEEP = re.compile("[,;'’]")  # pieces holding these stay whole (1,000)


def index_terms(text: str, *, secondary: bool = False) -> tuple[list[str], int]:
    """(lexemes in order, number of words) of `text` as the index stores them: each word,
    then its parts (identifier pieces, Korean syllable pairs) marked SECONDARY (``~part``);
    the emoji at the end. With `secondary` every lexeme is marked (an event's payload).

    A part is weaker evidence than a word of its own: kept apart, a word's rarity is not
    diluted by its use inside identifiers (``cancel`` in ``cancel_order``)."""
    found: list[str]
    if text.isascii() and not NEEDS_PARTS.search(text):
        found = _ascii_tokens(text.lower())
        words = len(found)
    elif text.isascii():
        marked = [m for m in map(_ascii_marked, ASCII_WORD_ANYCASE.findall(text)) if m]
        words = len(marked)
        found = list(chain.from_iterable(marked))
    else:
        pairs = _pairs(text)
        words = len(pairs)
        found = list(
            chain.from_iterable(
                (token, *[SECONDARY + p for p in token_parts]) for token, token_parts in pairs
            )
        )
    if secondary:
        found = [t if t.startswith(SECONDARY) else SECONDARY + t for t in found]
    return found, words


def query_clauses(text: str) -> list[tuple[str, list[str]]]:
    """The query's terms as (token, parts): a document matches a clause when it holds the
    token or the phrase of its parts. Repeats dropped (the search keeps the first
    `memory.search.ranking.SCORED_CLAUSES` after dropping function words)."""
    clauses: dict[str, list[str]] = {}
    for token, token_parts in _pairs(text):
        clauses.setdefault(token, list(token_parts))
    return list(clauses.items())
