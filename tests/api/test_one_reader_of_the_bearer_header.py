"""One function reads `Authorization: Bearer <token>` (`api.auth.bearer_token`); REST
authentication, its refusals, forks and MCP all call it, so they agree on what a header
carries."""

from __future__ import annotations

import pytest

from api.auth import bearer_token


@pytest.mark.parametrize("header", ["Bearer mz_a", "bearer mz_a", "BEARER  mz_a ", b"Bearer mz_a"])
def test_the_scheme_is_read_whatever_its_case_and_the_token_without_spaces(
    header: str | bytes,
) -> None:
    assert bearer_token(header) == "mz_a"


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer   ", "Basic mz_a", "Bearermz_a"])
def test_no_token_is_read_from_another_scheme_or_an_empty_one(header: str) -> None:
    assert bearer_token(header) is None
