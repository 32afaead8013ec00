"""A refusal for a token's scope says what the request would have done, in words that
read the same through an MCP tool (the tool relays the message), and which request it
was; not just "may not POST this endpoint"."""

from __future__ import annotations

from typing import Any

from memory.contexts import issue_token
from memory.scopes import ACTS, WRITE
from tests.api.conftest import Api, error_of


def test_a_read_token_is_told_it_may_not_change_memory(alpha: Any) -> None:
    read = Api("alpha", issue_token(alpha, scope="read").raw)
    response = read.post("transactions/", {"text": "(context-tx (derive a (goal b)))"})
    error = error_of(response)
    assert (response.status_code, error["code"]) == (403, "scope_insufficient")
    assert ACTS[WRITE] in error["message"]
    assert "POST /api/v1/contexts/alpha/transactions/" in error["message"]
    assert "'agent'" in error["message"]
