"""POST /api/v1/contexts/{slug}/frames/{id}/body/ : the explorer's body editor. The text is
only ever the body of that one frame."""

from __future__ import annotations

from typing import Any

from memory.models import Frame, TransactionRecord
from tests.api.conftest import Api, error_of


def _state(api: Api) -> list[tuple[str, int, str]]:
    frames = Frame.objects.filter(context__slug=api.slug).order_by("frame_id")
    return [(f.frame_id, f.revision, f.status) for f in frames]


def test_fields_that_close_the_revise_are_refused(api: Api, released: dict[str, Any]) -> None:
    before = (_state(api), TransactionRecord.objects.count())
    response = api.post(
        "frames/release/body/",
        {"form": "fields", "text": "(goal ship-v4)) (retire test-result"},
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "parse_error" and "line 1, column 15" in error["message"]
    assert (_state(api), TransactionRecord.objects.count()) == before


def test_fields_and_json_revise_the_one_frame(api: Api, released: dict[str, Any]) -> None:
    response = api.post(
        "frames/release/body/", {"form": "fields", "text": '(goal ship-v2)\n(owner "a b")'}
    )
    assert response.status_code == 201, response.json()
    response = api.post("frames/release/body/", {"form": "json", "text": '{"goal": ["x", "y"]}'})
    assert response.status_code == 201, response.json()
    frame = Frame.objects.get(context__slug=api.slug, frame_id="release")
    assert (frame.revision, frame.body) == (3, {"goal": ["x", "y"]})
    texts = TransactionRecord.objects.filter(committed_version__isnull=False).values_list(
        "text", flat=True
    )
    assert sum(t.count("(revise release") for t in texts) == 2


def test_json_with_a_repeated_key_or_not_an_object_is_refused(
    api: Api, released: dict[str, Any]
) -> None:
    repeated = api.post(
        "frames/release/body/", {"form": "json", "text": '{"goal":"ship-v1","goal":"ship-v2"}'}
    )
    assert repeated.status_code == 400
    assert "'goal' twice" in error_of(repeated)["message"]
    for text in ("[1]", "{", '{"a": NaN}'):
        response = api.post("frames/release/body/", {"form": "json", "text": text})
        assert response.status_code == 400, text
    frame = Frame.objects.get(context__slug=api.slug, frame_id="release")
    assert frame.revision == 1
