"""`mz.submit({...})` with the transaction's JSON form as one dict commits like the keywords
(`ops=`, `base_version=`, `reason=`); a key the form does not have is a TypeError naming it
and the keys it does have, before any request (it used to reach the server as `text` and
come back "Not a valid string")."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Frame
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("json-form")
    client = MorphzClient(live_server.url, issue_token(context).raw, context="json-form")
    yield client
    client.close()


def test_the_json_form_as_a_dict_commits(mz: Any) -> None:
    obs = mz.append_event("user_message", "ship v1 when the tests pass")
    receipt = mz.submit(
        {
            "base_version": mz.context()["version"],
            "reason": "goal noted",
            "ops": [
                {"op": "derive", "id": "release", "from": [obs["ref"]], "body": {"goal": "v1"}}
            ],
        }
    )
    assert receipt["version"] == 1
    assert Frame.objects.get(context__slug="json-form", frame_id="release").body == {"goal": "v1"}


@pytest.mark.parametrize(
    ("form", "named"),
    [
        ({"text": "(context-tx)", "ops": []}, "'text'"),
        ({"base-version": 0, "ops": []}, "'base-version'"),
        ({"base_version": 0, "reason": "no ops"}, "needs ops"),
    ],
)
def test_a_key_the_json_form_lacks_is_named(mz: Any, form: dict[str, Any], named: str) -> None:
    with pytest.raises(TypeError) as raised:
        mz.submit(form)
    assert named in str(raised.value) and "base_version, reason and ops" in str(raised.value)
    assert mz.context()["version"] == 0
