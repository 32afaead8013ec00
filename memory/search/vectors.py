"""What a search document says and how it is stored (R33).

How it works: docs/internals.md, section `memory/search/vectors.py`."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

import Stemmer

from memory.kinds import TRANSACTION
from memory.search import languages
from memory.search.textindex import SECONDARY, index_terms

MAX_TOKEN_CHARS = 200
MAX_POSITIONS = 16  # positions kept per lexeme: enough for phrases, keeps vectors small
MAX_VECTOR_BYTES = 1_000_000  # PostgreSQL refuses more than 1 MB of lexemes per tsvector
# A document's lexemes past that go to more tsvectors, its parts (`memory.models.SearchPart`):
# 32 MB of distinct words, past what an event of MAX_CONTENT_CHARS can say.
MAX_PARTS = 32
LAST_POSITION = 16383  # PostgreSQL's largest position
# Apostrophes a word may be written with (ICU joins letters across each): the index keeps the
# text's own, a query word matches them all.
APOSTROPHES = ("'", "\u2019", "\u2018")


# Stems (R62): an English word's Snowball stem (PyStemmer), marked STEM, is indexed beside
# the word when it differs (``cancelled`` -> ``=cancel``); a query word matches its stem
# as the stem itself or marked (`stem_form`), so ``cancel`` finds ``cancelled`` and back.
# Plain lower-case Latin words, whatever the text's language, as they always were. A text
# in another language Snowball stems (`languages`) has its words' stems in that language
# too, marked with it (``=fr:annul``); a query word matches them in each language of its
# script the context's documents hold (`languages.held`): stemming it in every one doubled
# an English context's search time. Chosen by measurement (BENCHMARKS.md).
STEM = "="
_PLAIN = re.compile(r"[a-z]{3,40}")
# A possessive or contraction ("customer's", "buyer’s", "customers'") is one word to ICU;
# Snowball's English stemmer strips the possessive itself (step 0), so such a word is
# stemmed too, its apostrophe written straight: "customer" then finds "the customer's refund".
_APOSTROPHE_WORD = re.compile(r"[a-z]+'[a-z]*")
_stemmer = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str | None:
    """`word`'s English stem when it is a plain Latin word (3-40 letters, or letters around
    one apostrophe of `APOSTROPHES`) whose stem differs from it, else None."""
    straight = word.replace("\u2019", "'").replace("\u2018", "'")
    if not (_PLAIN.fullmatch(word) or (len(word) <= 40 and _APOSTROPHE_WORD.fullmatch(straight))):
        return None
    found: str = _stemmer.stemWord(straight)
    return found if found != straight else None


def stem_root(word: str) -> str | None:
    """The stem a query word is searched by: its stem, or the word itself when it is its
    own stem (``cancel``); None for a word that is not stemmed (not plain Latin)."""
    found = stem(word)
    if found is not None:
        return found
    return word if _PLAIN.fullmatch(word) else None


class Vector(NamedTuple):
    """A document's lexemes as the index stores them."""

    literals: list[str]  # tsvector literals: the document's, then its parts'
    length: int  # words (BM25's document length)
    languages: tuple[str, ...]  # the languages its marked stems are in (`languages.held`)


def _stems(terms: list[str]) -> tuple[list[str], str | None]:
    """The English stems of `terms`, then their stems in their text's language if another
    (`languages`); and that language's code."""
    english = [STEM + found for term in dict.fromkeys(terms) if (found := stem(term))]
    code = languages.language(terms)
    return english + languages.stems(terms, code), code


def word_stems(term: str, codes: Iterable[str] = ()) -> set[str]:
    """The stem lexemes the index stores beside one word of a text (`_stems`, word by
    word): its English stem when it differs (``=cancel``), and its marked stem in each of
    `codes`, the languages its text was read as (``=fr:annul``). What a snippet marks a
    word by (`snippets.snippet`): the index's rule, not a second one."""
    english = stem(term)
    found = {STEM + english} if english else set()
    for code in codes:
        found.update(languages.stems([term], code))
    return found


def stem_lexemes(word: str, codes: frozenset[str]) -> list[str]:
    """The lexemes a query word's stem item finds another form of it by (`stem_form`): its
    stem said (``cancel``), its stem marked STEM (``=cancel``), and its marked stem in
    each language of `codes` its script is written in (``=fr:annul``)."""
    root = stem_root(word)
    found = [root, STEM + root] if root is not None else []
    return found + list(languages.query_stems(word, codes))


# Reply context (`memory.search.documents.reply_context`): the words of the turn a reply
# answers are indexed marked REPLY (``^museum``, and their stems ``^=museum``), apart from
# the reply's own words, so the ranking weighs them as their own, weaker evidence
# (`reply_form`, `memory.search.ranking.REPLY_WEIGHT`) without changing any word's count;
# the reply's length counts them (`event_vector`).
REPLY = "^"


def reply_form(token: str, token_parts: list[str], codes: frozenset[str]) -> str:
    """The tsquery literal of a query word heard only in the turn a reply answers: the
    word (or its stem) marked REPLY, in a document not saying any form of it itself.
    `codes`: the languages its stems are searched in (`stem_form`)."""
    root = stem_root(token)
    forms = [_lexeme(REPLY + token)] + ([_quote(REPLY + STEM + root)] if root else [])
    forms += [_quote(REPLY + lexeme) for lexeme in languages.query_stems(token, codes)]
    return f"(({' | '.join(forms)}) & !{clause_any(token, token_parts, codes)})"


def stem_form(word: str, codes: frozenset[str], *, other: bool = False) -> str | None:
    """The tsquery literal of a query word's stem: the stem said, or marked STEM. With
    `other`, only in a document not saying the word itself (another form of it: the
    ranking's stem item, so a document saying the word does not count it twice). Its
    stems in the languages of `codes` (the context's, `languages.held`) match only as
    marked (`languages.query_stems`)."""
    forms = [_quote(lexeme) for lexeme in stem_lexemes(word, codes)]
    if not forms:
        return None
    literal = f"({' | '.join(forms)})"
    return f"({literal} & !{_lexeme(word)})" if other else literal


def frame_vector(frame_id: str, body: Any) -> Vector:
    """A frame's lexemes: its id weighted A, its body's keys and values B, their stems D
    (tsvector literals: the document's, then its parts'); its length and language."""
    name, name_words = index_terms(frame_id)
    body_terms, body_words = index_terms(flatten(body))
    stems, code = _stems(name + body_terms)
    sections = [(name, "A"), (body_terms, "B"), (stems, "D")]
    found = (code,) if code else ()
    return Vector(weighted_tsvector_literals(sections), name_words + body_words, found)


def event_vector(kind: str, content: str, payload: Any, context: str | None = None) -> Vector:
    """An event's lexemes: its text weighted C (D for a transaction, which echoes what its
    frames hold), its payload secondary and D, the stems of its text D; its length and the
    languages of its marked stems (its text's, its context's).
    `context`: the turn a conversational event answers (`documents`), its words and stems
    marked REPLY (a reply like "yes, last week" is about what it replies to), and its words
    counted in the length: the reply stands for both, so a one-word reply lending a whole
    question's words is not scored as a one-word document saying them (BENCHMARKS.md)."""
    text_terms, words = index_terms(content)
    stems, code = _stems(text_terms)
    codes = [code] if code else []
    sections = [(text_terms, "C" if kind != TRANSACTION else "D"), (stems, "D")]
    if payload is not None:
        extra, extra_words = index_terms(flatten(payload), secondary=True)
        sections.append((extra, "D"))
        words += extra_words
    if context:
        context_terms, context_words = index_terms(context)
        words += context_words
        context_stems, context_code = _stems(context_terms)
        marked = [REPLY + term for term in context_terms + context_stems]
        sections.append((marked, "D"))
        codes += [context_code] if context_code else []
    return Vector(weighted_tsvector_literals(sections), words, tuple(dict.fromkeys(codes)))


def spellings(token: str) -> list[str]:
    """`token` written with each apostrophe (`APOSTROPHES`): the same word (don't, don’t)."""
    if not any(a in token for a in APOSTROPHES):
        return [token]
    straight = token.replace("\u2019", "'").replace("\u2018", "'")
    return [straight.replace("'", a) for a in APOSTROPHES]


def _lexeme(lexeme: str) -> str:
    """One lexeme as a tsquery operand, any of its spellings."""
    forms = spellings(lexeme)
    if len(forms) == 1:
        return _quote(lexeme)
    return "(" + " | ".join(map(_quote, forms)) + ")"


def clause_forms(token: str, token_parts: list[str]) -> tuple[str, str]:
    """(primary, secondary) tsquery literals of one query word (see the module)."""
    primary = _lexeme(token)
    secondary = _lexeme(SECONDARY + token)
    if token_parts:
        # A document saying the word itself holds its parts too: they count only without it.
        phrase = " <-> ".join(f"({_lexeme(p)} | {_lexeme(SECONDARY + p)})" for p in token_parts)
        secondary = f"({secondary} | ({phrase}) & !{primary})"
    return primary, secondary


def clause_any(token: str, token_parts: list[str], codes: frozenset[str]) -> str:
    """Any form of a query word (itself, secondary, its stem; `codes`: see `stem_form`),
    as one tsquery literal."""
    primary, secondary = clause_forms(token, token_parts)
    stemmed = stem_form(token, codes)
    return f"({primary} | {secondary}{' | ' + stemmed if stemmed else ''})"


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
    quote = _quote
    return " ".join(
        [quote(t) + ":" + ",".join(map(str, positions[t])) for t in _split(positions)[0]]
    )


def weighted_tsvector_literals(sections: list[tuple[list[str], str]]) -> list[str]:
    """Like `tsvector_literal` over the sections' terms in order (positions run on), each
    position carrying its section's weight letter (A, B, C or D): the document's tsvector,
    then its parts' when its lexemes pass PostgreSQL's bound (`_split`).

    PostgreSQL keeps positions up to LAST_POSITION: terms past it only add the lexemes not
    seen before (deduplicated first, in C: a 3.5 MB log has ~650,000 terms)."""
    positions: dict[str, list[str]] = {}
    get = positions.get
    index = 0
    for token_list, weight in sections:
        head = token_list[: max(0, LAST_POSITION - index)]
        for offset, token in enumerate(head, start=index + 1):
            found = get(token)
            if found is None:
                positions[token] = [f"{offset}{weight}"]
            elif len(found) < MAX_POSITIONS:
                found.append(f"{offset}{weight}")
        index += len(head)
        if len(head) < len(token_list):
            last = [f"{LAST_POSITION}{weight}"]
            for token in dict.fromkeys(token_list[len(head) :]):  # in order: see below
                if token not in positions:
                    positions[token] = last
    quote = _quote
    return [
        " ".join([quote(t) + ":" + ",".join(positions[t]) for t in chunk])
        for chunk in _split(positions)
    ]


def _split(positions: dict[str, list[Any]]) -> list[list[str]]:
    """The lexemes in tsvectors PostgreSQL will store, in order: it refuses more than 1 MB
    of lexemes and positions in one, so a giant log's lexemes run on into more parts (at
    most MAX_PARTS; the document itself is the first): every word of it is found."""
    if sum(map(len, positions)) * 4 + (2 * MAX_POSITIONS + 4) * len(positions) <= MAX_VECTOR_BYTES:
        return [list(positions)]
    chunks: list[list[str]] = [[]]
    size = 0
    for token, found in positions.items():
        # What PostgreSQL counts: the lexeme, its positions (2 bytes each), alignment.
        cost = len(token[:MAX_TOKEN_CHARS].encode()) + 2 * len(found) + 4
        if size + cost > MAX_VECTOR_BYTES:
            if len(chunks) == MAX_PARTS:
                break
            chunks.append([])
            size = 0
        chunks[-1].append(token)
        size += cost
    return chunks


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
    """What a frame says: its id, then its body flattened (`flatten`)."""
    return f"{frame_id}\n{flatten(body)}"


def event_text(content: str, payload: Any, *, include_payload: bool = True) -> str:
    """What an event says: its content, then its payload flattened (unless left out)."""
    if payload is None or not include_payload:
        return content
    extra = flatten(payload)
    return f"{content}\n{extra}" if extra else content
