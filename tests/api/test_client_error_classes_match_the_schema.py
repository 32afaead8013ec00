"""The Python client's error classes and code checks name only codes the OpenAPI schema's enum
holds, each with the HTTP status the schema gives it (the client does not import the server:
the schema is the contract between them)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from morphz_client import errors as client

CLIENT = Path(client.__file__).parent
# A code the client makes itself, for an answer that is not the API's error shape.
CLIENT_ONLY = {"unexpected_response"}
# Calls whose positional argument at this index is a code.
CODE_ARGUMENT = {"InvalidPathValueError": 0, "ServerError": 1, "__init__": 1}
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


def _strings(node: ast.AST | None) -> set[str]:
    """The string constants of `node`: itself, or the items of a tuple, list, set or call."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_strings(item) for item in node.elts))
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set"):
        return set().union(*(_strings(arg) for arg in node.args))
    return set()


def _about_code(node: ast.AST) -> bool:
    """`code`, `x.code`, `x["code"]`, `x.get("code")`, or a name for a set of codes."""
    if isinstance(node, ast.Name):
        return node.id == "code" or node.id.endswith("_CODES")
    if isinstance(node, ast.Attribute):
        return node.attr == "code"
    if isinstance(node, ast.Subscript):
        return _strings(node.slice) == {"code"}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "get" and _strings(node.args[0] if node.args else None) == {"code"}
    return False


def client_codes(source: str) -> set[str]:
    """The codes a client module compares an answer's code with, keys its classes by, or
    raises with."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_about_code(side) for side in sides):
                found.update(*(_strings(side) for side in sides))
        elif (isinstance(node, ast.Assign) and any(_about_code(t) for t in node.targets)) or (
            isinstance(node, ast.AnnAssign) and _about_code(node.target)
        ):
            found.update(_strings(node.value))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            index = CODE_ARGUMENT.get(name)
            if index is not None and len(node.args) > index:
                found.update(_strings(node.args[index]))
    return found - {"code"}


def test_the_scan_finds_the_clients_codes_in_every_form() -> None:
    source = """
if exc.code == "conflict" or error.get("code") in ("frame_exists", "unknown_ref"):
    pass
_RACE_CODES = frozenset({"relation_exists"})
raise InvalidPathValueError("invalid_frame_id", "frame_id", value, "a frame id")
super().__init__(400, "invalid_ref", message, [])
"""
    assert client_codes(source) == {
        "conflict",
        "frame_exists",
        "unknown_ref",
        "relation_exists",
        "invalid_frame_id",
        "invalid_ref",
    }


def test_every_code_the_client_names_is_in_the_schema(schema: dict[str, Any]) -> None:
    named = {
        f"{path.name}: {code}"
        for path in sorted(CLIENT.rglob("*.py"))
        for code in client_codes(path.read_text()) - CLIENT_ONLY
    }
    assert {entry for entry in named if entry.split(": ")[1] not in _schema_codes(schema)} == set()
    assert len(named) >= 10  # the scan still finds the client's codes
