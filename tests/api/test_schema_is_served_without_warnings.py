"""Serving the OpenAPI schema logs no warning: the two `status` vocabularies (events, frames)
have names of their own instead of colliding into hash-named enums, a warning in the
server log every time `/api/schema/` was served."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import GENERATOR_STATS


def test_the_schema_is_served_without_a_warning(client: Any, db: Any, capsys: Any) -> None:
    GENERATOR_STATS.reset()  # warnings are printed once per process; start from none
    response = client.get("/api/schema/")
    assert response.status_code == 200
    err = capsys.readouterr().err
    assert "Warning" not in err and "Error" not in err, err
    schema = response.content.decode()
    assert "EventStatusEnum:" in schema and "FrameStatusEnum:" in schema
