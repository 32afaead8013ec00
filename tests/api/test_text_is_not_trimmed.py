"""Text in a request is taken as written: surrounding spaces are not silently cut off, so
a value that is only valid without them is refused rather than fixed up (`" main "` is
not the thread `main`, `" goal "` not the frame `goal`, `" sp "` not the slug `sp`), and
text that may hold spaces keeps them."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Context, Evaluation, Event
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("path", "body", "code", "field"),
    [
        (
            "events/",
            {"kind": "tool_result", "content": "x", "thread": " main "},
            "invalid_thread",
            "thread",
        ),
        ("evaluations/", {"thread": "main "}, "invalid_thread", "thread"),
        ("actions/", {"name": "deploy", "thread": " worker:2"}, "invalid_thread", "thread"),
        ("forks/", {"slug": " sp "}, "invalid_request", "slug"),
    ],
)
def test_padded_names_in_a_body_are_refused(
    api: Api, path: str, body: dict[str, Any], code: str, field: str
) -> None:
    before = (Event.objects.count(), Evaluation.objects.count(), Context.objects.count())
    response = api.post(path, body)
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == code
    assert field in [d.get("field") for d in error["details"]]
    assert (Event.objects.count(), Evaluation.objects.count(), Context.objects.count()) == before


def test_a_padded_frame_id_is_not_the_frame(api: Api) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    response = api.post("recall/", {"frame_id": " goal "})
    assert response.status_code in (400, 404), response.json()
    assert error_of(response)["code"] in ("invalid_frame_id", "not_found")


def test_a_padded_query_thread_is_refused(api: Api) -> None:
    response = api.get("events/", {"thread": " main"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_thread"


def test_text_that_may_hold_spaces_keeps_them(api: Api) -> None:
    response = api.post("forks/", {"name": "  Padded  "})
    assert response.status_code == 201, response.json()
    assert Context.objects.get(slug=response.json()["slug"]).name == "  Padded  "
    action = api.post("actions/", {"name": " deploy "})
    assert action.status_code == 201, action.json()
    assert (
        Event.objects.get(seq=action.json()["seq"], context__slug="alpha").payload["name"]
        == " deploy "
    )
