"""Token estimates (R23, R24): a wide (CJK) character is one token, other text four
characters a token, at every edge of the wide ranges."""

from __future__ import annotations

import pytest

from memory.tokens import estimate_tokens, fit_prefix

WIDE_EDGES = [0x2E80, 0x9FFF, 0xAC00, 0xD7AF, 0xF900, 0xFAFF, 0xFF00, 0xFFEF, 0x20000, 0x2FFFF]
NARROW_NEIGHBOURS = [
    0x2E7F,
    0xA000,
    0xABFF,
    0xD7B0,
    0xF8FF,
    0xFB00,
    0xFEFF,
    0xFFF0,
    0x1FFFF,
    0x30000,
]


@pytest.mark.parametrize("code", WIDE_EDGES)
def test_each_edge_of_a_wide_range_is_one_token(code: int) -> None:
    # eight wide characters and eight accented Latin ones: 8 + 8/4
    assert estimate_tokens(chr(code) * 8 + "é" * 8) == 10
    assert fit_prefix(chr(code) * 8, 3) == 3


@pytest.mark.parametrize("code", NARROW_NEIGHBOURS)
def test_a_character_just_outside_a_wide_range_is_a_quarter_token(code: int) -> None:
    assert estimate_tokens(chr(code) * 8 + "é" * 8) == 4
    assert fit_prefix(chr(code) * 8, 1) == 4


def test_mixed_text_counts_wide_and_narrow_apart() -> None:
    assert estimate_tokens("长任务 done") == 3 + 2  # 3 wide + (6 narrow + 3) // 4
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcde") == 2
