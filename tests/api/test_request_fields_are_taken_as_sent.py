"""Request fields are taken as sent (docs/rest.md): no coercion of text, integers or
flags, no trimming, no lone surrogates; a refused field is named and nothing is written.

Text and integers in a JSON body are not coerced, in the last two fields that did: a fork's
`slug` given as a number (`12345` made a context "12345") and a body edit's `base_version`
given as text or with a fraction (`"12"`, `12.0`) are 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.exceptions import ValidationError

from api.fields import ContentField, StrictCharField
from memory.models import Context, Evaluation, Event, Frame
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


# A boolean flag in a JSON body is a JSON `true` or `false`: `"true"`, `"yes"`, `1` or
# `0` are 400 `invalid_flag` naming the flag (docs/rest.md: text and numbers are not
# coerced), and nothing is written; in a query string the usual spellings still work.

NOT_BOOLEANS = ["true", "yes", "1", 1, 0, None]


@pytest.mark.parametrize("value", NOT_BOOLEANS)
@pytest.mark.parametrize("flag", ["continuation", "include_instructions"])
def test_an_evaluation_flag_is_a_json_boolean(api: Api, flag: str, value: Any) -> None:
    api.observe("pending")
    response = api.post("evaluations/", {flag: value})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_flag"
    assert [d["field"] for d in error["details"]] == [flag]
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize("value", NOT_BOOLEANS)
@pytest.mark.parametrize("flag", ["include_bodies", "include_events", "as_observation"])
def test_a_recall_flag_is_a_json_boolean(api: Api, flag: str, value: Any) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    before = Event.objects.count()
    response = api.post("recall/", {"frame_id": "goal", flag: value})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_flag"
    assert [d["field"] for d in error["details"]] == [flag]
    assert Event.objects.count() == before


def test_json_booleans_work(api: Api) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    answer = api.post("recall/", {"frame_id": "goal", "include_bodies": False}).json()
    assert "body" not in answer["nodes"][0]
    assert api.post("evaluations/", {"continuation": True}).json()["continuation"] is True


@pytest.mark.parametrize(("value", "removed"), [("true", True), ("yes", True), ("0", False)])
def test_a_query_flag_takes_the_usual_spellings(api: Api, value: str, removed: bool) -> None:
    api.commit("(context-tx (derive a (n 1)) (derive b (n 2)) (relate a supports b))")
    api.commit("(context-tx (unrelate a supports b))")
    response = api.get("relations/", {"include_removed": value})
    assert response.status_code == 200, response.json()
    assert len(response.json()["relations"]) == (1 if removed else 0)


# Text in a request is taken as written: surrounding spaces are not silently cut off, so
# a value that is only valid without them is refused rather than fixed up (`" main "` is
# not the thread `main`, `" goal "` not the frame `goal`, `" sp "` not the slug `sp`), and
# text that may hold spaces keeps them.


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


# Text fields refuse lone surrogates with REST framework's own message and code, checked
# by one search however long the text is.


@pytest.mark.parametrize("field", [StrictCharField(), ContentField()])
def test_a_lone_surrogate_is_refused_with_its_code_point(field):
    with pytest.raises(ValidationError) as raised:
        field.run_validation("ok " * 20_000 + "\udc80")
    assert raised.value.get_codes() == ["surrogate_characters_not_allowed"]
    assert "U+DC80" in str(raised.value.detail[0])


def test_text_without_surrogates_passes_unchanged():
    assert StrictCharField(trim_whitespace=False).run_validation("héllo 世界 🙂") == "héllo 世界 🙂"
