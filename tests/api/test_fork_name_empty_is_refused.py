"""A fork's `name` is the name to give it, or absent (or null) for the default one: an
empty or blank name is 400 naming `name` and creates no context, rather than silently
meaning the default."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.models import Context
from memory.versions.forks import fork_context
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_an_empty_fork_name_is_refused(api: Api, name: str) -> None:
    before = Context.objects.count()
    response = api.post("forks/", {"name": name})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == ["name"]
    assert Context.objects.count() == before


@pytest.mark.parametrize("body", [{}, {"name": None}])
def test_an_absent_or_null_name_is_the_default(api: Api, body: dict[str, None]) -> None:
    response = api.post("forks/", body)
    assert response.status_code == 201, response.json()
    fork = Context.objects.get(slug=response.json()["slug"])
    assert fork.name == "Alpha (fork at v0)"


def test_a_given_name_is_kept(api: Api) -> None:
    response = api.post("forks/", {"name": "Try-out"})
    assert response.status_code == 201, response.json()
    assert Context.objects.get(slug=response.json()["slug"]).name == "Try-out"


def test_the_memory_function_refuses_a_blank_name(alpha: Context) -> None:
    with pytest.raises(InvalidRequest) as raised:
        fork_context(alpha, name=" ")
    assert raised.value.details == [{"field": "name"}]
    assert not Context.objects.exclude(pk=alpha.pk).exists()
