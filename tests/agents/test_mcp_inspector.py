"""The official MCP inspector (npm `@modelcontextprotocol/inspector`, CLI mode, pinned in
package.json) lists and calls Morphz's tools over stdio and streamable HTTP, as a person
checking a server would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from tests.agents.conftest import REPO

INSPECTOR = REPO / "node_modules" / ".bin" / "mcp-inspector"
ANN = {"name": "Zoé", "entityType": "person", "observations": ["likes jazz"]}


def _inspect(target: list[str], tmp_path: Path, *args: str) -> Any:
    if not INSPECTOR.exists():
        pytest.fail("the inspector needs `npm ci` (./dev install)")
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *target, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    return json.loads(done.stdout)


def _session(target: list[str], tmp_path: Path) -> None:
    listed = _inspect(target, tmp_path, "--method", "tools/list")
    names = {t["name"] for t in listed["tools"]}
    assert {"create_entities", "open_nodes", "active_context", "commit"} <= names
    created = _inspect(
        target,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "create_entities",
        "--tool-arg",
        f"entities={json.dumps([ANN], ensure_ascii=False)}",
    )
    assert not created.get("isError"), created
    assert created["structuredContent"] == {"entities": [ANN]}
    opened = _inspect(
        target,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "open_nodes",
        "--tool-arg",
        'names=["Zoé", "Zoë"]',
    )
    assert json.loads(opened["content"][0]["text"]) == {"entities": [ANN], "relations": []}


@pytest.mark.slow
def test_inspector_over_stdio_and_http(
    asgi_server: Any, transactional_db: Any, tmp_path: Path
) -> None:
    command = shutil.which("morphz-mcp", path=os.path.dirname(sys.executable))
    assert command
    stdio_token = issue_token(create_context("inspected-stdio")).raw
    http_token = issue_token(create_context("inspected-http")).raw
    _session(
        [
            "-e",
            f"MORPHZ_URL={asgi_server.url}",
            "-e",
            f"MORPHZ_TOKEN={stdio_token}",
            "-e",
            "MORPHZ_CONTEXT=inspected-stdio",
            command,
        ],
        tmp_path,
    )
    _session(
        [
            f"{asgi_server.url}/mcp/",
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {http_token}",
        ],
        tmp_path,
    )
