"""The Python client's error classes name only codes the OpenAPI schema's error-code enum
holds, each with the HTTP status the schema gives it (the client does not import the server:
the schema is the contract between them)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from morphz_client import errors as client

# "409 `stale_cursor`: ..." or "400 / 401: ..." at the start of a client class's docstring.
DOCUMENTED = re.compile(r"^(\d{3})[^:]*?`(\w+)`")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _schema_codes(schema: dict[str, Any]) -> set[str]:
    return set(schema["components"]["schemas"]["ErrorCodeEnum"]["enum"])


def _status_by_code(schema: dict[str, Any]) -> dict[str, int]:
    """Each code's status, as the schema's error responses describe it ("...: `a`, `b`")."""
    out: dict[str, int] = {}
    for item in schema["paths"].values():
        for operation in item.values():
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    listed = response["description"].rsplit(": ", 1)[-1]
                    out.update((code, int(status)) for code in re.findall(r"`(\w+)`", listed))
    return out


def test_the_error_body_code_is_the_error_code_enum(schema: dict[str, Any]) -> None:
    body = schema["components"]["schemas"]["ErrorBody"]["properties"]["code"]
    assert body["allOf"] == [{"$ref": "#/components/schemas/ErrorCodeEnum"}]


def test_every_code_and_status_the_client_dispatches_on_is_in_the_schema(
    schema: dict[str, Any],
) -> None:
    assert set(client.BY_CODE) - _schema_codes(schema) == set()
    assert set(client.BY_STATUS) - set(_status_by_code(schema).values()) == set()


def test_each_client_class_documents_the_status_the_schema_gives_its_code(
    schema: dict[str, Any],
) -> None:
    codes = _schema_codes(schema)
    status_by_code = _status_by_code(schema)
    classes = [
        cls
        for cls in vars(client).values()
        if isinstance(cls, type) and issubclass(cls, client.MorphzAPIError)
    ]
    wrong = {}
    for cls in classes:
        match = DOCUMENTED.match(cls.__doc__ or "")
        if match is None:
            continue
        status, code = int(match.group(1)), match.group(2)
        if code not in codes:
            wrong[cls.__name__] = f"`{code}` is not an error code of the schema"
        elif code in status_by_code and status_by_code[code] != status:
            wrong[cls.__name__] = f"says {status}, the schema {status_by_code[code]}"
    assert wrong == {}
    # a class chosen by its code names that code first
    named = {code: DOCUMENTED.match(cls.__doc__ or "") for code, cls in client.BY_CODE.items()}
    assert {
        code for code, match in named.items() if match is None or match.group(2) != code
    } == set()
