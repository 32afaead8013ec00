"""One error registry: every code the source raises has its HTTP status in api.errors."""

from __future__ import annotations

import ast
from pathlib import Path

from api.errors import STATUS_BY_CODE, status_for

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory", "api", "explorer", "morphz")
# Calls whose positional argument at this index is an error code.
CODE_ARGUMENT = {"ApiError": 0, "error_response": 0, "error_body": 0, "_fail": 2, "OpError": 2}


def _string(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _codes_in(tree: ast.AST) -> set[str]:
    codes: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            codes.update(_string(kw.value) for kw in node.keywords if kw.arg == "code")
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            index = CODE_ARGUMENT.get(name or "")
            if index is not None and len(node.args) > index:
                codes.add(_string(node.args[index]))
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "code" for t in stmt.targets
                ):
                    codes.add(_string(stmt.value))
    return {c for c in codes if c is not None}


def raised_codes() -> dict[str, str]:
    found: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for code in _codes_in(ast.parse(path.read_text(), str(path))):
                found.setdefault(code, str(path.relative_to(ROOT)))
    return found


def test_the_scan_finds_codes_of_every_kind():
    found = raised_codes()
    # a class attribute, a `code=` keyword, an `_fail` argument, an ApiError argument
    assert {"stale_view", "invalid_depth", "frame_exists", "invalid_cursor"} <= set(found)


def test_every_raised_code_is_registered():
    unlisted = {code: where for code, where in raised_codes().items() if code not in STATUS_BY_CODE}
    assert unlisted == {}


def test_an_unlisted_code_is_a_server_error_not_a_guess():
    assert status_for("no_such_code_anywhere") == 500
    assert status_for("self_citation") == 422
    assert status_for("invalid_depth") == 400
