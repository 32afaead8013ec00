"""R67: the TypeScript client (client/typescript) passes its Node tests (`node --test`)
against a live server, and its generated types match the server's OpenAPI schema."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "client" / "typescript"
GENERATOR = REPO / "node_modules" / ".bin" / "openapi-typescript"


def test_the_node_tests_pass_against_a_live_server(make_client: Any, live_server: Any) -> None:
    node = shutil.which("node")
    assert node, "Node is part of the development set-up (./dev install)"
    mz = make_client("ts-client")
    run = subprocess.run(
        [node, "--test", "test/"],
        cwd=PACKAGE,
        env={
            "PATH": str(Path(node).parent),
            "MORPHZ_URL": live_server.url,
            "MORPHZ_TOKEN": mz.token,
            "MORPHZ_CONTEXT": mz.slug,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # Every test the files declare ran and passed: none skipped, none lost by a file that
    # failed to load.
    declared = sum(
        len(re.findall(r"^test\(", path.read_text(), re.MULTILINE))
        for path in (PACKAGE / "test").glob("*.test.mjs")
    )
    assert declared > 0
    assert "# fail 0" in run.stdout and f"# pass {declared}\n" in run.stdout, run.stdout[-4000:]


def test_the_generated_types_are_those_of_the_current_schema(tmp_path: Path, db: Any) -> None:
    """Fails when the API changed and `schema.d.ts` was not regenerated (the command is in
    docs/agents.md)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    if not GENERATOR.exists():
        pytest.fail("openapi-typescript is missing: run ./dev install")
    schema = SchemaGenerator().get_schema(request=None, public=True)
    source = tmp_path / "schema.json"
    source.write_bytes(OpenApiJsonRenderer().render(schema, renderer_context={}))
    json.loads(source.read_text())
    out = tmp_path / "schema.d.ts"
    subprocess.run(
        [str(GENERATOR), str(source), "-o", str(out)],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=120,
    )
    committed = (PACKAGE / "src" / "schema.d.ts").read_text()
    assert out.read_text() == committed, (
        "client/typescript/src/schema.d.ts is stale: regenerate it (docs/agents.md)"
    )
