"""The client never lets a value it puts into a URL path name another resource: a frame id
or an evaluation id the server could not have made is refused before any request
(`InvalidPathValueError`, a ValueError), instead of reading `transactions/` or an `as_of`
view as if it were the frame asked for."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("paths")
    sent: list[str] = []
    http = httpx.Client(
        base_url=live_server.url,
        event_hooks={"request": [lambda request: sent.append(request.url.path)]},
    )
    client = MorphzClient(live_server.url, issue_token(context).raw, http=http)
    client.sent = sent
    yield client
    client.close()
    http.close()


@pytest.mark.parametrize(
    "frame_id", ["../transactions", "release/?as_of=1#", "..", "Release", "", "a b"]
)
def test_a_frame_id_the_server_could_not_hold_is_refused_before_sending(
    mz: Any, frame_id: str
) -> None:
    from morphz_client import InvalidPathValueError

    sent = len(mz.sent)
    with pytest.raises(InvalidPathValueError) as caught:
        mz.frame(frame_id)
    assert caught.value.code == "invalid_frame_id"
    assert isinstance(caught.value, ValueError)
    assert len(mz.sent) == sent  # nothing went to the server


@pytest.mark.parametrize("ref", [True, -1, 0, None, 1.5, "@e0", "e5", "@e1/../../"])
def test_an_event_ref_that_is_not_one_is_refused_before_sending(mz: Any, ref: Any) -> None:
    from morphz_client import InvalidRefError

    sent = len(mz.sent)
    with pytest.raises(InvalidRefError):
        mz.read_event(ref)
    assert len(mz.sent) == sent


@pytest.mark.parametrize("evaluation_id", ["1/../../", 0, True, "7"])
def test_an_evaluation_id_that_is_not_a_positive_integer_is_refused(
    mz: Any, evaluation_id: Any
) -> None:
    from morphz_client import InvalidPathValueError

    with pytest.raises(InvalidPathValueError):
        mz.evaluation(evaluation_id)


def test_a_well_formed_unknown_frame_is_still_asked_for(mz: Any) -> None:
    from morphz_client import NotFoundError

    with pytest.raises(NotFoundError):
        mz.frame("release-v9")
    assert mz.sent[-1].endswith("/frames/release-v9/")
