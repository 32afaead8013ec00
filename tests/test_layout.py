"""Units stay small enough to read: no module over 400 lines and no function over 60 lines
in memory/, api/, client/, protocol/ and morphz/, unless a `# long:` comment gives the reason (on the line above
the function's `def` or its first decorator, or among a module's first lines). Migrations are
generated and exempt."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memory", "api", "client", "protocol", "morphz")
MODULE_LINES = 400
FUNCTION_LINES = 60
REASON = "# long:"
HEAD_LINES = 5


def _modules() -> list[Path]:
    """The tracked modules of PACKAGES (`git ls-files`: an untracked folder changes nothing)."""
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        ROOT / p
        for p in sorted(tracked)
        if p.endswith(".py") and "/migrations/" not in p and (ROOT / p).exists()
    ]


def _long_units(path: Path, root: Path = ROOT) -> list[str]:
    lines = path.read_text().splitlines()
    name = path.relative_to(root).as_posix()
    problems = []
    if len(lines) > MODULE_LINES and not any(
        line.startswith(REASON) for line in lines[:HEAD_LINES]
    ):
        problems.append(f"{name}: {len(lines)} lines")
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        assert node.end_lineno is not None
        # Decorators (an OpenAPI schema, a tool registration) are not the function's logic.
        length = node.end_lineno - node.lineno + 1
        if length <= FUNCTION_LINES:
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        above = lines[first - 2].strip() if first >= 2 else ""
        if not above.startswith(REASON):
            problems.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return problems


def test_modules_and_functions_are_short_or_say_why() -> None:
    modules = _modules()
    assert modules
    problems = [problem for path in modules for problem in _long_units(path)]
    assert problems == []


def test_the_check_sees_a_long_function_and_its_reason(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    bare = tmp_path / "bare.py"
    bare.write_text(f"def f() -> None:\n{body}\n")
    reasoned = tmp_path / "reasoned.py"
    reasoned.write_text(f"# long: one table, read top to bottom\ndef f() -> None:\n{body}\n")
    assert _long_units(bare, tmp_path) == [f"bare.py:1 f: {FUNCTION_LINES + 1} lines"]
    assert _long_units(reasoned, tmp_path) == []


# Where every public function says what it takes and gives (shapes, units, errors); the
# rest of memory/ is on its way there.
DOCUMENTED = ("client/morphz_client", "memory/shapes", "api/shapes.py")


def test_public_functions_of_the_client_and_the_shapes_have_docstrings() -> None:
    undocumented = []
    for entry in DOCUMENTED:
        base = ROOT / entry
        for path in sorted(base.rglob("*.py")) if base.is_dir() else [base]:
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and not node.name.startswith("_")
                    and ast.get_docstring(node) is None
                ):
                    undocumented.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert undocumented == []


# Every public function and method of memory/ says what it gives (shapes, units, errors and
# the lock it needs). Methods Django calls (documented by Django) and methods of private
# classes are left out; migrations are generated.
DJANGO_HOOKS = frozenset(
    {
        # Model, Form, AppConfig
        "save",
        "delete",
        "clean",
        "ready",
        # Field
        "db_type",
        "from_db_value",
        "to_python",
        "get_prep_value",
        "value_to_string",
        # ModelAdmin
        "has_add_permission",
        "has_change_permission",
        "has_delete_permission",
        "get_readonly_fields",
        "get_queryset",
        "get_deleted_objects",
        "save_model",
        "delete_model",
        "delete_queryset",
        # BaseCommand
        "handle",
        "add_arguments",
        "create_parser",
    }
)


def _undocumented(path: Path, root: Path = ROOT) -> list[str]:
    """Public functions and methods of one module without a docstring, as `path:line name`.
    Nested functions are private to their parent and not looked at."""
    name = path.relative_to(root).as_posix()
    found = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body)
            elif (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and not node.name.startswith("_")
                and node.name not in DJANGO_HOOKS
                and ast.get_docstring(node) is None
            ):
                found.append(f"{name}:{node.lineno} {node.name}")

    visit(ast.parse(path.read_text()).body)
    return found


def test_public_functions_of_memory_have_docstrings() -> None:
    undocumented = [
        problem
        for path in _modules()
        if path.relative_to(ROOT).parts[0] == "memory"
        for problem in _undocumented(path)
    ]
    assert undocumented == []


def test_the_check_sees_a_missing_docstring(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f() -> None:\n    pass\n\n\n"
        'def g() -> None:\n    """Said."""\n\n\n'
        "def _h() -> None:\n    pass\n\n\n"
        "class C:\n    def save(self) -> None:\n        pass\n\n"
        "    def m(self) -> None:\n        pass\n\n\n"
        "class _P:\n    def m(self) -> None:\n        pass\n"
    )
    assert _undocumented(module, tmp_path) == ["m.py:1 f", "m.py:17 m"]


# A module docstring says what the module is for in a few lines; how it works goes to
# docs/internals.md (or the user-facing docs page), measurements to BENCHMARKS.md.
DOCSTRING_LINES = 8


def _long_docstring(path: Path, root: Path = ROOT) -> str | None:
    tree = ast.parse(path.read_text())
    first = tree.body[0] if tree.body else None
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return None
    assert first.end_lineno is not None
    length = first.end_lineno - first.lineno + 1
    name = path.relative_to(root).as_posix()
    return f"{name}: {length} lines" if length > DOCSTRING_LINES else None


def test_module_docstrings_are_a_few_lines() -> None:
    modules = _modules()
    assert modules
    long = [found for path in modules if (found := _long_docstring(path))]
    assert long == []


def test_the_check_sees_a_long_module_docstring(tmp_path: Path) -> None:
    lines = "\n".join(f"line {i}" for i in range(DOCSTRING_LINES))
    (tmp_path / "long.py").write_text(f'"""Summary.\n{lines}\n"""\n')
    (tmp_path / "short.py").write_text('"""Summary.\n\nMore."""\n')
    assert _long_docstring(tmp_path / "long.py", tmp_path) == (
        f"long.py: {DOCSTRING_LINES + 2} lines"
    )
    assert _long_docstring(tmp_path / "short.py", tmp_path) is None
