r"""Invisible format characters (Unicode category Cf: soft hyphen, zero-width space and
joiners, bidi controls, word joiner, BOM, tag characters, ...), which the text pipeline
drops before anything else (`textindex.normalise`): they neither split a word nor stick to
it, so ``in\u00advoice`` and ``\u202einvoice\u202c`` are ``invoice``."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from itertools import chain


@cache
def format_characters() -> str:
    """Every category Cf character, in code point order. Unicode puts them in planes 0, 1
    and 14 (the test of this rule checks every plane). Built on first use, not at import
    (it reads 135,000 categories: ~18 ms)."""
    planes = chain(range(0x20000), range(0xE0000, 0xE1000))
    return "".join(c for c in map(chr, planes) if unicodedata.category(c) == "Cf")


def _character_class(chars: str) -> re.Pattern[str]:
    """A pattern matching one of `chars` (sorted), runs of consecutive code points as ranges
    (listed one by one, astral characters are compared with each: several times slower)."""
    runs: list[list[str]] = []
    for c in chars:
        if runs and ord(runs[-1][1]) + 1 == ord(c):
            runs[-1][1] = c
        else:
            runs.append([c, c])
    spans = (re.escape(a) if a == b else f"{re.escape(a)}-{re.escape(b)}" for a, b in runs)
    return re.compile(f"[{''.join(spans)}]")


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(BMP, astral) character classes of `format_characters`. Multi-MB tool results go
    through here: the BMP class is a bitmap to the regular expression engine (~5 ms a MB);
    the astral one, ranges it compares each character with, is looked for only in a text
    that has an astral character."""
    chars = format_characters()
    bmp = _character_class("".join(c for c in chars if ord(c) <= 0xFFFF))
    return bmp, _character_class("".join(c for c in chars if ord(c) > 0xFFFF))


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def without_format_characters(text: str) -> str:
    """`text` without its invisible format characters (the same object when it has none)."""
    bmp, astral = _patterns()
    text = bmp.sub("", text)
    return astral.sub("", text) if _ASTRAL.search(text) else text
