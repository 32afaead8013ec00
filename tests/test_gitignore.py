"""The ignore list covers `.venv` and `node_modules` also when they are symlinks (a
trailing slash in .gitignore only matches real directories)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("name", [".venv", "node_modules"])
def test_symlinked_environments_are_ignored(name: str, tmp_path: Path) -> None:
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / name).symlink_to(tmp_path / "elsewhere")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = subprocess.run(
        ["git", "check-ignore", "-q", name], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, f"{name} (a symlink) is not ignored {result.stderr}"
