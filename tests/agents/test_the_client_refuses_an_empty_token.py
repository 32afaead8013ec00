"""`MorphzClient` refuses an empty token (or one with spaces around it) when it is made,
naming the problem, instead of failing on its first request with httpx's "Illegal header
value b'Bearer '" and no status."""

from __future__ import annotations

import pytest
from morphz_client import MorphzClient


@pytest.mark.parametrize("token", ["", "   ", " mz_abc", "mz_abc\n"])
def test_an_empty_or_padded_token_is_refused_at_once(token: str) -> None:
    with pytest.raises(ValueError, match="token") as caught:
        MorphzClient("http://127.0.0.1:1", token, context="x")
    assert "mz_" in str(caught.value)
