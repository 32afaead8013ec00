"""A frame body with unusual text (quotes, backslashes, escapes spelled out, control and
format characters, astral emoji, very long digit strings, empty and nested maps and lists,
keys in no sorted order) is stored by the commit function (`morphz_write_commit`) exactly
as JSON prints it, in the frame and in its revision, and comes back from the API with the
same values in the same key order (R4)."""

from __future__ import annotations

import json

from django.db import connection

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
