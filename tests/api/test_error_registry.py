"""One error registry: every code is an `ErrorCode` member declared with its HTTP status, and
no raise site in the server names a code as a string."""

from __future__ import annotations

import ast
from pathlib import Path

from api.errors import STATUS_BY_CODE, ApiError
from memory.errors import ErrorCode, InvalidField, MorphzError, NotFound

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory", "api", "explorer", "morphz")
# Calls whose positional argument at this index is an error code.
CODE_ARGUMENT = {
    "ApiError": 0,
    "error_response": 0,
    "error_body": 0,
    "_fail": 2,
    "OpError": 2,
    "_check_int": 2,
    "bad": 2,
}
CODES = {code.value for code in ErrorCode}


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _named_code(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "code") or (
        isinstance(node, ast.Attribute) and node.attr == "code"
    )


def _code_positions(node: ast.AST) -> list[ast.AST | None]:
    """The expressions that `node` uses as an error code, whatever their form."""
    if isinstance(node, ast.Call):
        found: list[ast.AST | None] = [kw.value for kw in node.keywords if kw.arg == "code"]
        func = node.func
        index = CODE_ARGUMENT.get(
            func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        )
        if index is not None and len(node.args) > index:
            found.append(node.args[index])
        return found
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [node.value] if any(_named_code(t) for t in targets) else []
    if isinstance(node, ast.Dict):
        return [v for k, v in zip(node.keys, node.values, strict=True) if _literal(k) == "code"]
    if isinstance(node, ast.arguments):
        named = [*node.posonlyargs, *node.args][-len(node.defaults) :] if node.defaults else []
        pairs = [
            *zip(named, node.defaults, strict=True),
            *zip(node.kwonlyargs, node.kw_defaults, strict=True),
        ]
        return [default for arg, default in pairs if arg.arg == "code"]
    return []


def string_codes(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal used as an error code in `source`: passed as
    `code=`, to a call that takes a code, assigned to `code`, as a `"code"` entry or a
    parameter's default; and any literal spelling a known code outside a dict key (a
    comparison, a returned pair), except in the declaration of `ErrorCode` itself."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ErrorCode":
            skip.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if k is not None)
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        for value in _code_positions(node):
            text = _literal(value)
            if text is not None and value is not None:
                found.add((value.lineno, text))  # type: ignore[attr-defined]
        text = _literal(node)
        if text in CODES and id(node) not in skip:
            found.add((node.lineno, text))  # type: ignore[attr-defined]
    return sorted(found)


def test_the_scan_finds_a_string_code_in_every_form():
    source = """
class Gone(MorphzError):
    code = "gone"
def check(value, code="invalid_limit"):
    raise InvalidRequest("no", code="invalid_depth")
raise ApiError("invalid_cursor", "bad cursor")
self._fail(index, op, "frame_exists", "exists")
entry = {"code": "reply_rejected", "conflict": True}
if exc.code == "context_frozen":
    return "message", "too_large"
"""
    assert [code for _, code in string_codes(source)] == [
        "gone",
        "invalid_limit",
        "invalid_depth",
        "invalid_cursor",
        "frame_exists",
        "reply_rejected",
        "context_frozen",
        "too_large",
    ]


def test_members_and_non_code_strings_are_not_string_codes():
    source = """
class ErrorCode(StrEnum):
    CONFLICT = "conflict", 409
raise InvalidRequest("conflict with the base version", code=ErrorCode.INVALID_DEPTH)
entry = {"conflict": True, "code": ErrorCode.REPLY_REJECTED}
"""
    assert string_codes(source) == []


def test_no_raise_site_names_a_code_as_a_string():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            where = path.relative_to(ROOT)
            found += [f"{where}:{line} {code!r}" for line, code in string_codes(path.read_text())]
    assert found == [], "name the code as an ErrorCode member (memory/errors.py)"


def test_the_status_table_is_derived_from_the_codes():
    assert {code.value: code.status for code in ErrorCode} == STATUS_BY_CODE
    assert all(400 <= code.status <= 599 for code in ErrorCode)


def test_an_error_answers_with_the_status_its_code_declares():
    assert NotFound("gone").status == 404
    assert MorphzError("x", code=ErrorCode.SELF_CITATION).status == 422
    assert ApiError(ErrorCode.INVALID_DEPTH, "too deep").status_code == 400


def test_a_field_error_answers_the_fields_own_code():
    assert InvalidField("events[2].thread", "bad").code == ErrorCode.INVALID_THREAD
    assert InvalidField("depth", "bad", max=5).details == [{"field": "depth", "max": 5}]
    assert InvalidField("nickname", "bad").code == ErrorCode.INVALID_REQUEST
