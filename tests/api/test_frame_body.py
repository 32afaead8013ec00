"""POST /api/v1/contexts/{slug}/frames/{id}/body/ : the explorer's body editor. The text is
only ever the body of that one frame."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

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


# A body edit (`POST frames/{id}/body/`) that fails names what the client sent: the body's
# problems are in `text` (the place inside it in the message), a frame id that cannot be one
# is `invalid_frame_id` naming `frame_id`; never `ops[0].body.x` or `ops[0].id`, fields of a
# transaction the client never wrote. Nothing is written.


@pytest.mark.parametrize(
    ("form", "text", "in_message"),
    [
        ("json", '{"goal": 1}', "goal: "),
        ("json", '{"goal": {"stage": [null]}}', "goal.stage[0]: "),
        ("json", '{"from": "x"}', "from: "),
        ("json", '{"": "x"}', "a field name cannot be empty"),
        ("json", '{"goal": "a", "goal": "b"}', "'goal' twice"),
        ("json", "[1]", "JSON object"),
        ("fields", "(from x) (goal y)", "from"),
    ],
)
def test_a_bad_body_names_text(
    api: Api, released: dict[str, Any], form: str, text: str, in_message: str
) -> None:
    before = TransactionRecord.objects.count()
    response = api.post("frames/release/body/", {"form": form, "text": text})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] in ("invalid_request", "parse_error")
    assert [d.get("field") for d in error["details"]] == ["text"], error
    assert "ops[0]" not in error["message"]
    assert in_message in error["message"]
    assert Frame.objects.get(context__slug=api.slug, frame_id="release").revision == 1
    assert TransactionRecord.objects.count() == before


def test_a_frame_id_that_cannot_be_one_is_invalid_frame_id(api: Api) -> None:
    response = api.post("frames/Release/body/", {"form": "fields", "text": "(goal y)"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_frame_id"
    assert [d["field"] for d in error["details"]] == ["frame_id"]
    assert "ops[0]" not in error["message"]
    assert not TransactionRecord.objects.exists()


# A frame body with unusual text (quotes, backslashes, escapes spelled out, control and
# format characters, astral emoji, very long digit strings, empty and nested maps and lists,
# keys in no sorted order) is stored by the commit function (`morphz_write_commit`) exactly
# as JSON prints it, in the frame and in its revision, and comes back from the API with the
# same values in the same key order (R4).

BODY = {
    "zeta": "é ✓ 😀 𝄞 中文",
    "alpha": 'quote " back\\slash \\u0000 spelled out \\n',
    "ctrl": "tab\there nl\nline cr\r \x01\x1f\x7f\x85 \u2028\u2029 \ufeff \uffff",
    "big": "123456789012345678901234567890",
    "float": "1e400",
    "neg": "-0.0",
    "empty": "",
    "m": {},
    "l": [],
    "nested": [["a", ["b", {"y": "1", "x": "2"}]], {"k": {"z": "", "a": []}}],
    "Key With Spaces": "v",
    "ключ": "значение",
    "emoji😀": "x",
}
REVISED = dict(reversed(BODY.items()))


def stored_texts(context_pk: int) -> list[tuple[int, str, str]]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT r.revision, r.body::text, f.body::text FROM memory_framerevision r "
            "JOIN memory_frame f ON f.id = r.frame_id "
            "WHERE f.context_id = %s AND f.frame_id = 'odd' ORDER BY r.revision",
            [context_pk],
        )
        return list(cur.fetchall())


def printed(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def test_bodies_are_stored_and_served_exactly(api, alpha):
    for op in ("derive", "revise"):
        body = BODY if op == "derive" else REVISED
        response = api.post("transactions/", {"ops": [{"op": op, "id": "odd", "body": body}]})
        assert response.status_code == 201, response.json()
    assert stored_texts(alpha.pk) == [
        (1, printed(BODY), printed(REVISED)),
        (2, printed(REVISED), printed(REVISED)),
    ]
    served = api.get("frames/odd/").json()
    assert json.dumps(served["body"], ensure_ascii=False) == json.dumps(REVISED, ensure_ascii=False)
