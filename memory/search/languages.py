"""Stems beyond English (R62): a text's language (py3langid, its model in the package),
and the Snowball stems (PyStemmer) of its words in that language, marked with it.

How it works: docs/internals.md, section `memory/search/languages.py`."""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

import Stemmer
from django.db import connection

from memory.sql import named_rows, statements

# A document's language is read from its first DETECT_WORDS words (what the index keeps:
# no markup, numbers or identifiers to mislead it, and py3langid's cost grows with each
# byte), and taken when py3langid gives it CONFIDENCE or more (a greeting or a name alone
# reads as nothing). Plain ASCII words of which ENGLISH_SHARE or more are among the most
# common English words are English without asking: most of what an agent stores.
DETECT_WORDS = 40
CONFIDENCE = 0.5
ENGLISH_SHARE = 0.2
OTHER_SHARE = 0.1
_COMMON_ENGLISH = """
the a an and or of to in on at for with from by as is are was were be been it its this that
i you he she we they my your our not no have has had do does did will can but so if me him
her them what when how all there
"""
_ENGLISH = frozenset(_COMMON_ENGLISH.split())
# Plain ASCII words of which fewer than OTHER_SHARE (or two) are among these, common words
# of the Latin-script languages Snowball stems, are not prose in one of them: names, keys,
# codes (a tool call's JSON) are not read.
_COMMON_OTHER = """
le la les des du un une et est pour que qui dans pas sur avec au aux ce il elle nous vous
sont der die das und ist nicht ein eine mit auf dem sich von wir sie wurde wurden el los las
del y por con para fue fueron se al lo como pero il gli che di della non sono os da dos
das em um uma com foram het een en van dat niet zijn met voor ook naar och att det som ett
pa inte till av og er til ikke ja ei se ett oli ve bir bu icin ile dan yang di ini itu
untuk dengan tidak dari ke si este cu pe nu care els amb ha ho anche questo molto oggi
pelo pela muito mais isso esta nao
"""
_OTHER = frozenset(_COMMON_OTHER.split())
# The languages PyStemmer stems, by the code py3langid names them with, and the script
# their words are written in (a query word is stemmed in those of its context's languages
# written in its script).
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
# Letters and marks only: no number, identifier or marked term.
_WORD = re.compile(rf"(?:[^\W\d_]|{_MARKS})+")
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


def language(terms: list[str]) -> str | None:
    """The code of the language of a text whose index terms are `terms` when it is one
    Snowball stems other than English (``fr``), read with CONFIDENCE or more; None for
    English, another language, or none recognised (English stems are `vectors.stem`'s, for
    every text as before)."""
    head = terms[: 2 * DETECT_WORDS]
    # Most texts end here, without a word's regular expression: set lookups run in C.
    # (English typed with curly apostrophes is plain ASCII words.)
    plain = "".join(head).replace("\u2019", "").replace("\u2018", "")
    if plain.isascii() and (
        sum(map(_ENGLISH.__contains__, head)) >= ENGLISH_SHARE * len(head)
        or sum(map(_OTHER.__contains__, head)) < max(2.0, OTHER_SHARE * len(head))
    ):
        return None
    words = [term for term in head if _WORD.fullmatch(term)][:DETECT_WORDS]
    if not words:
        return None
    code, confidence = _identify(" ".join(words))
    return code if code in SNOWBALL and confidence >= CONFIDENCE else None


@functools.cache
def _stemmer(code: str) -> Any:
    return Stemmer.Stemmer(SNOWBALL[code][0])


def marked(code: str, root: str) -> str:
    """The lexeme of a stem in a language: ``=fr:annul`` (see docs/search.md)."""
    return f"{STEM}{code}:{root}"


def unmarked(lexeme: str) -> tuple[str | None, str]:
    """A stem lexeme's language and root, the inverse of `marked`: ``=fr:annul`` ->
    ``("fr", "annul")``; an English stem (``=cancel``) or a word (``cancel``) has none."""
    bare = lexeme.removeprefix(STEM)
    code, colon, root = bare.partition(":")
    if colon and code in SNOWBALL and bare != lexeme:
        return code, root
    return None, bare


def stems(terms: list[str], code: str | None) -> list[str]:
    """The marked stems of the words among `terms` in language `code` (each word's, even
    when the word is its own stem: a query word finds it only as marked); none without."""
    if code is None:
        return []
    pattern, stemmer = _WORDS[code], _stemmer(code)
    words = [term for term in dict.fromkeys(terms) if pattern.fullmatch(term)]
    return [marked(code, root) for root in dict.fromkeys(stemmer.stemWords(words))]


def held(context_id: int) -> frozenset[str]:
    """The languages whose marked stems the context's search documents hold (their codes,
    `memory.models.SearchLanguage`, written with the documents): what `query_stems` stems
    a query in. Read for each search, not kept: a French document just indexed makes the
    next search stem in French. Empty for a context of English (or unread) text only."""
    with connection.cursor() as cursor:
        cursor.execute(statements("memory.search")["context_languages"], {"ctx": context_id})
        return frozenset(row["language"] for row in named_rows(cursor))


@functools.lru_cache(maxsize=65536)
def query_stems(word: str, codes: frozenset[str]) -> tuple[str, ...]:
    """`word`'s marked stem in each language of `codes` (`held`) its script is written in
    (a query is too short to tell its language): ``annulées`` -> ``=fr:annul``, ...;
    nothing without `codes`: an English-only context's query carries no other stems."""
    return tuple(
        marked(code, _stemmer(code).stemWord(word))
        for code in sorted(codes)
        if code in _WORDS and _WORDS[code].fullmatch(word)
    )
