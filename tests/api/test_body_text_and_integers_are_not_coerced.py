"""Text and integers in a JSON body are not coerced (docs/rest.md), in the last two fields
that did: a fork's `slug` given as a number (`12345` made a context "12345") and a body
edit's `base_version` given as text or with a fraction (`"12"`, `12.0`) are 400 naming the
field, and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Context, Frame
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("slug", [12345, 1.5, True, ["a"]])
def test_a_fork_slug_is_text(api: Api, slug: Any) -> None:
    before = Context.objects.count()
    response = api.post("forks/", {"slug": slug})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == ["slug"]
    assert Context.objects.count() == before


@pytest.mark.parametrize("base_version", ["1", 1.0, True, "01"])
def test_a_body_edit_base_version_is_an_integer(api: Api, base_version: Any) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    response = api.post(
        "frames/goal/body/",
        {"form": "fields", "text": "(state done)", "base_version": base_version},
    )
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_base_version"
    assert [d["field"] for d in error["details"]] == ["base_version"]
    assert Frame.objects.get(context__slug=api.slug, frame_id="goal").revision == 1


def test_an_integer_base_version_works(api: Api) -> None:
    version = api.commit("(context-tx (derive goal (state open)))")["version"]
    response = api.post(
        "frames/goal/body/", {"form": "fields", "text": "(state done)", "base_version": version}
    )
    assert response.status_code == 201, response.json()
