"""Context slugs are unique whatever their case: creating, forking or importing into a slug
that differs from a taken one only in case is `context_exists`, naming the taken one, and
the database refuses such a pair even when the check is bypassed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, transaction

from memory.contexts import check_slug, create_context
from memory.errors import InvalidRequest
from memory.models import Context
from memory.versions.exchange import export_context, import_context
from memory.versions.forks import fork_context


@pytest.fixture
def demo(db: Any) -> Context:
    return create_context("Demo")


def test_creating_a_slug_that_differs_only_in_case_is_context_exists(demo: Context) -> None:
    with pytest.raises(InvalidRequest) as caught:
        create_context("demo")
    assert caught.value.code == "context_exists"
    assert "'Demo'" in str(caught.value)
    assert Context.objects.count() == 1


def test_forking_into_another_case_of_a_taken_slug_is_context_exists(demo: Context) -> None:
    with pytest.raises(InvalidRequest) as caught:
        fork_context(demo, slug="DEMO")
    assert caught.value.code == "context_exists"
    assert Context.objects.count() == 1


def test_importing_into_another_case_of_a_taken_slug_is_context_exists(
    demo: Context, tmp_path: Path
) -> None:
    path = tmp_path / "demo.jsonl.gz"
    export_context(demo, path)
    with pytest.raises(InvalidRequest) as caught:
        import_context(path, slug="dEMO")
    assert caught.value.code == "context_exists"
    assert Context.objects.count() == 1


def test_the_database_refuses_a_pair_differing_only_in_case(demo: Context) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Context.objects.create(slug="demo")


def test_a_slug_longer_than_the_field_is_invalid_not_a_database_error(db: Any) -> None:
    with pytest.raises(InvalidRequest):
        check_slug("a" * 65)
    check_slug("a" * 64)
