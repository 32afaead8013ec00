"""Stems beyond English (R62): a text's language (py3langid, its model in the package),
and the Snowball stems (PyStemmer) of its words in that language, marked with it.

How it works: docs/internals.md, section `memory/search/languages.py`."""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

import Stemmer

# A document's language is read from its first DETECT_CHARS characters, and taken when
# py3langid gives it CONFIDENCE or more (a greeting or a name alone reads as nothing).
DETECT_CHARS = 2000
CONFIDENCE = 0.5
# The languages PyStemmer stems, by the code py3langid names them with, and the script
# their words are written in (a query word is stemmed in each language of its script).
LATIN, CYRILLIC = r"[a-z\u00df-\u00f6\u00f8-\u024f\u1e00-\u1eff]", r"[\u0400-\u04ff]"
SNOWBALL = {
    "ar": ("arabic", r"[\u0600-\u06ff]"),
    "ca": ("catalan", LATIN),
    "cs": ("czech", LATIN),
    "da": ("danish", LATIN),
    "de": ("german", LATIN),
    "el": ("greek", r"[\u0370-\u03ff\u1f00-\u1fff]"),
    "eo": ("esperanto", LATIN),
    "es": ("spanish", LATIN),
    "et": ("estonian", LATIN),
    "eu": ("basque", LATIN),
    "fa": ("persian", r"[\u0600-\u06ff]"),
    "fi": ("finnish", LATIN),
    "fr": ("french", LATIN),
    "ga": ("irish", LATIN),
    "hi": ("hindi", r"[\u0900-\u097f]"),
    "hu": ("hungarian", LATIN),
    "hy": ("armenian", r"[\u0530-\u058f]"),
    "id": ("indonesian", LATIN),
    "it": ("italian", LATIN),
    "lt": ("lithuanian", LATIN),
    "ne": ("nepali", r"[\u0900-\u097f]"),
    "nl": ("dutch", LATIN),
    "no": ("norwegian", LATIN),
    "pl": ("polish", LATIN),
    "pt": ("portuguese", LATIN),
    "ro": ("romanian", LATIN),
    "ru": ("russian", CYRILLIC),
    "sr": ("serbian", CYRILLIC),
    "sv": ("swedish", LATIN),
    "ta": ("tamil", r"[\u0b80-\u0bff]"),
    "tr": ("turkish", LATIN),
}
_MARKS = r"[\u0300-\u036f\u064b-\u065f\u0900-\u0903\u093a-\u094f\u0b82\u0bbe-\u0bcd]"
# What a word must be to be stemmed in each language: 3 to 40 letters of its script (a
# diacritic, Indic vowel sign or Arabic harakat is a mark, part of the word).
_WORDS = {
    code: re.compile(rf"(?:{script}{_MARKS}*){{3,40}}") for code, (_, script) in SNOWBALL.items()
}
_LETTER = re.compile(r"[^\W\d_]")
STEM = "="  # as `vectors.STEM`: a foreign stem is ``=fr:annul``, an English one ``=cancel``

_lock = threading.Lock()
_identifier: list[Any] = []  # loaded on first use (2 s: the model is compressed)


def _identify(text: str) -> tuple[str, float]:
    if not _identifier:
        with _lock:
            if not _identifier:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _identifier.append(LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True))
    code, confidence = _identifier[0].classify(text)
    return str(code), float(confidence)


def language(text: str) -> str | None:
    """The code of `text`'s language when it is one Snowball stems other than English
    (``fr``), read with CONFIDENCE or more; None for English, another language, or none
    recognised (English stems are `vectors.stem`'s, for every text as before)."""
    head = text[:DETECT_CHARS]
    if not _LETTER.search(head):
        return None
    code, confidence = _identify(head)
    return code if code in SNOWBALL and confidence >= CONFIDENCE else None


@functools.cache
def _stemmer(code: str) -> Any:
    return Stemmer.Stemmer(SNOWBALL[code][0])


def marked(code: str, root: str) -> str:
    """The lexeme of a stem in a language: ``=fr:annul`` (see docs/search.md)."""
    return f"{STEM}{code}:{root}"


def stems(terms: list[str], code: str | None) -> list[str]:
    """The marked stems of the words among `terms` in language `code` (each word's, even
    when the word is its own stem: a query word finds it only as marked); none without."""
    if code is None:
        return []
    pattern, stemmer = _WORDS[code], _stemmer(code)
    words = [term for term in dict.fromkeys(terms) if pattern.fullmatch(term)]
    return [marked(code, root) for root in dict.fromkeys(stemmer.stemWords(words))]


@functools.lru_cache(maxsize=65536)
def query_stems(word: str) -> tuple[str, ...]:
    """`word`'s marked stem in each language its script is written in (a query is too short
    to tell its language): ``annulées`` -> ``=fr:annul``, ``=es:annul``, ..."""
    return tuple(
        marked(code, _stemmer(code).stemWord(word))
        for code, pattern in _WORDS.items()
        if pattern.fullmatch(word)
    )
