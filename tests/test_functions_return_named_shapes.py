"""Functions in memory/ and api/ return named shapes (TypedDicts in memory/shapes, dataclasses),
never a bare `dict[str, Any]`: a field renamed in one place would otherwise go unseen by the
type checker. The handful that hold JSON no one declares (a user's payload, a protocol's
message) are listed in OPAQUE with the reason (docs/rest.md, "Shapes")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memory", "api")

# module:function -> why its JSON has no declared shape.
OPAQUE = {
    "memory/admin.py:clean": "Django's Form.clean returns the form's cleaned data",
    "memory/agents/parts.py:_arguments": "a model's tool-call arguments, checked per tool",
    "memory/strictjson.py:_unique_object": "any JSON object a client sent",
    "memory/tx/lang/parser.py:_operation": "a transaction's operation as written",
    "memory/tx/lang/jsonform.py:_validate_op": "a transaction's operation as written",
    "memory/tx/submission.py:parse_submission": "a transaction as written",
    "memory/tx/bodyedit.py:parse_body_text": "a frame's body: the model's own JSON",
    "memory/erasure/mask.py:_rekeyed": "a body's or payload's map, its keys masked",
    "memory/read/paging.py:answer": "a page's items go under the list's own name",
    "memory/versions/points.py:params": "SQL parameters",
    "memory/search/filters.py:sql_filters": "SQL parameters",
    "memory/sql/__init__.py:by_name": "a row by column name: the columns are the statement's",
    "memory/sql/__init__.py:named_row": "a row by column name: the columns are the statement's",
    "memory/sql/__init__.py:named_rows": "rows by column name: the columns are the statement's",
    "api/requests.py:model_schema": "a JSON Schema document (OpenAPI's, from pydantic)",
    "api/bounds.py:bounded_input": "any answer holding a compiled input, with fields left out",
}


def _is_untyped_dict(annotation: ast.expr) -> bool:
    """`dict`, `dict[str, Any]` or `dict[str, object]` anywhere in the annotation."""
    subscripted = {id(n.value) for n in ast.walk(annotation) if isinstance(n, ast.Subscript)}
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "dict" and id(node) not in subscripted:
            return True  # a bare `dict`
        generic = isinstance(node, ast.Subscript) and ast.unparse(node.value) == "dict"
        if generic and ast.unparse(node.slice).strip("()") in ("str, Any", "str, object"):
            return True
    return False


def untyped_returns(root: Path, packages: tuple[str, ...]) -> set[str]:
    """`module:function` of each function annotated to return an undeclared dict."""
    found = set()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            name = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text())):
                function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                if function and node.returns and _is_untyped_dict(node.returns):
                    found.add(f"{name}:{node.name}")
    return found


def test_functions_return_named_shapes_outside_the_allow_list() -> None:
    assert untyped_returns(ROOT, PACKAGES) - set(OPAQUE) == set()


def test_the_lists_name_only_functions_that_still_return_a_bare_dict() -> None:
    assert set(OPAQUE) - untyped_returns(ROOT, PACKAGES) == set()


def test_the_check_sees_a_bare_dict_return(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "from typing import Any, TypedDict\n"
        "class Shape(TypedDict):\n    a: int\n"
        "def bare() -> dict[str, Any]: ...\n"
        "def listed() -> list[dict[str, object]]: ...\n"
        "def plain() -> dict: ...\n"
        "def counts() -> dict[str, int]: ...\n"
        "def by_status() -> dict[int, Any]: ...\n"
        "def named() -> Shape: ...\n"
    )
    assert untyped_returns(tmp_path, ("pkg",)) == {
        "pkg/m.py:bare",
        "pkg/m.py:listed",
        "pkg/m.py:plain",
    }
