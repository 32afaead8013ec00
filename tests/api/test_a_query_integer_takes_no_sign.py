"""A query-string integer is ASCII digits alone: a minus sign is refused like a plus sign
(`-0` is not read as 0), with the parameter's own code and a message saying so (not that
`-1` is no integer); no query integer may be negative."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, error_of


@pytest.mark.parametrize("sign", ["-", "+"])
@pytest.mark.parametrize(
    ("path", "params", "code"),
    [
        ("search/", {"q": "invoice", "offset": "{}0"}, "invalid_offset"),
        ("events/", {"after": "{}0"}, "invalid_request"),
        ("events/1/", {"offset": "{}0"}, "invalid_offset"),
        ("frames/", {"as_of": "{}0"}, "invalid_version"),
    ],
)
def test_a_signed_query_integer_is_refused(
    api: Api, sign: str, path: str, params: dict[str, str], code: str
) -> None:
    api.observe("invoice sent")
    signed = {name: value.format(sign) for name, value in params.items()}
    response = api.get(path, signed)
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == code
    assert "without a sign" in response.text
