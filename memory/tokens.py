"""Token estimates for the active context (R23, R24).

A model-independent estimate: CJK and other wide characters count one token each, other
text about four characters per token. Good enough to budget; no tokenizer download needed.
"""

from __future__ import annotations

import json
from typing import Any


def _is_wide(ch: str) -> bool:
    code = ord(ch)
    return (
        0x2E80 <= code <= 0x9FFF  # CJK radicals, kana, unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x2FFFF
    )


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    wide = sum(1 for ch in text if _is_wide(ch))
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
