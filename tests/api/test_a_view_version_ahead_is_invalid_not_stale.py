"""A recall's `view_version` the context never had (ahead of its version) is 400
`invalid_view_version`, as a transaction's `base_version` ahead is 400
`invalid_base_version`; an older one is 409 `stale_view` (evaluate again)."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, error_of


def test_a_view_version_ahead_of_the_context_is_invalid(api: Api, released: Any) -> None:
    version = api.get().json()["version"]

    ahead = api.post("recall/", {"frame_id": "release", "view_version": version + 1})
    older = api.post("recall/", {"frame_id": "release", "view_version": version - 1})
    current = api.post("recall/", {"frame_id": "release", "view_version": version})

    assert ahead.status_code == 400
    assert error_of(ahead)["code"] == "invalid_view_version"
    assert str(version) in error_of(ahead)["message"]
    assert (older.status_code, error_of(older)["code"]) == (409, "stale_view")
    assert current.status_code == 200
