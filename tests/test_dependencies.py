"""Dependencies read one way: the server (memory/, api/) never imports the client package,
and no module imports another module's private (`_name`) names. Read from the repository's
tracked files (`git ls-files`), so an untracked folder in the checkout changes nothing."""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ("memory/", "api/")


def _tracked_modules() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [p for p in out.split() if "/migrations/" not in p and (ROOT / p).exists()]


def _imports(path: str, root: Path = ROOT) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names imported from it) of each import in the module at `path`."""
    tree = ast.parse((root / path).read_text(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            yield node.lineno, module, [alias.name for alias in node.names]


def _imports_the_client(path: str, root: Path = ROOT) -> list[str]:
    return [
        f"{path}:{line}: {module}"
        for line, module, _names in _imports(path, root)
        if module == "morphz_client" or module.startswith("morphz_client.")
    ]


def _private_imports(path: str, root: Path = ROOT) -> list[str]:
    return [
        f"{path}:{line}: from {module} import {name}"
        for line, module, names in _imports(path, root)
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]


def test_the_server_never_imports_the_client_package() -> None:
    server = [p for p in _tracked_modules() if p.startswith(SERVER)]
    assert server, "no server modules found"
    found = [hit for path in server for hit in _imports_the_client(path)]
    assert not found, "memory/ and api/ import morphz_client:\n" + "\n".join(found)


def test_no_module_imports_a_private_name_from_another() -> None:
    modules = [p for p in _tracked_modules() if not p.startswith("tests/")]
    found = [hit for path in modules for hit in _private_imports(path)]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(
        "import morphz_client\nfrom morphz_client.mcp_calls import tool_call\n"
        "from a.b import _c, d\nfrom . import _e\n"
    )
    assert _imports_the_client("probe.py", tmp_path) == [
        "probe.py:1: morphz_client",
        "probe.py:2: morphz_client.mcp_calls",
    ]
    assert _private_imports("probe.py", tmp_path) == [
        "probe.py:3: from a.b import _c",
        "probe.py:4: from . import _e",
    ]
