"""Token estimates for the active context (R23, R24).

A model-independent estimate: CJK and other wide characters count one token each, other
text about four characters per token. Good enough to budget; no tokenizer download needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

# Wide characters (each one token): CJK radicals, kana and unified ideographs, Hangul
# syllables, CJK compatibility ideographs, full-width forms, the supplementary ideographs.
_WIDE_RANGES = (
    (0x2E80, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x20000, 0x2FFFF),
)
# The same ranges as one character class: counted by the regex engine, not a Python loop
# over every character (a 40 kB tool result costs 0.1 ms, not 4 ms).
_WIDE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _WIDE_RANGES) + "]")


# The same class for other modules (memory.erasure.mask keeps a wide character wide).
WIDE_CHARACTER = _WIDE


def _is_wide(ch: str) -> bool:
    return _WIDE.match(ch) is not None


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: a quarter token per character, a whole one per wide (CJK)
    character; 0 for empty text."""
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    wide = len(text) - len(_WIDE.sub("", text))
    return wide + (len(text) - wide + 3) // 4


def estimate_frame_tokens(frame_id: str, body: Any, sources: list[str]) -> int:
    """Tokens a frame costs in the prompt: its id, sources and body as rendered."""
    rendered = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return (
        estimate_tokens(frame_id)
        + estimate_tokens(" ".join(sources))
        + estimate_tokens(rendered)
        + 4
    )


# Per-item observation budget (R47): the context's observation_budget_tokens.
ITEM_OVERHEAD = 4  # the item's header line


def _cost(ch: str) -> float:
    return 1.0 if _is_wide(ch) else 0.25


def fit_prefix(text: str, tokens: int) -> int:
    """How many leading characters of `text` fit in `tokens` (by `estimate_tokens`' rule)."""
    return _fit(text, iter(text), tokens)


def fit_suffix(text: str, tokens: int) -> int:
    """How many trailing characters of `text` fit in `tokens`."""
    return _fit(text, reversed(text), tokens)


def _fit(text: str, chars: Iterator[str], tokens: int) -> int:
    """How many of `chars` (the characters of `text` from one end) fit in `tokens`."""
    if text.isascii():
        return min(len(text), max(0, tokens) * 4)
    spent = 0.0
    for count, ch in enumerate(chars):
        spent += _cost(ch)
        if spent > tokens:
            return count
    return len(text)


def observation_tokens(content: str, budget: int) -> int:
    """What an observation costs in the model input: its estimate, or the budget when it
    enters as a preview (compile builds the preview to fit the budget)."""
    full = estimate_tokens(content) + ITEM_OVERHEAD
    return full if full <= budget else budget
