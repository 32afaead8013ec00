"""`morphz-mcp` as a person runs it: `--help` answers and exits 0, `initialize` names the
server's version, and stderr stays quiet (one line per failed call; -v for more)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

COMMAND = shutil.which("morphz-mcp", path=os.path.dirname(sys.executable))


def test_help_and_version_exit_zero() -> None:
    assert COMMAND, "the morphz-mcp console script is installed with the client package"
    shown = subprocess.run([COMMAND, "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "MORPHZ_TOKEN" in shown.stdout and "--verbose" in shown.stdout
    version = subprocess.run([COMMAND, "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == "morphz-mcp 0.1.0"


def test_initialize_reports_the_server_version() -> None:
    from importlib.metadata import version

    from mcp import Client
    from morphz_client.mcp_server import build_server

    async def run() -> Any:
        async with Client(build_server()) as client:
            return client.server_info

    info = asyncio.run(run())
    assert info.name == "morphz" and info.version == version("morphz-client") != ""


def _stderr_of_session(mz: Any, tmp_path: Path, *flags: str) -> list[str]:
    """Two good calls and one failing call over stdio; the lines the server wrote to stderr."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=str(COMMAND),
        args=list(flags),
        env={
            **os.environ,
            "MORPHZ_URL": str(mz._http.base_url).rstrip("/"),
            "MORPHZ_TOKEN": mz.token,
            "MORPHZ_CONTEXT": mz.slug,
        },
    )
    log = tmp_path / f"stderr{len(flags)}.txt"

    async def run() -> None:
        with open(log, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                entity = {"name": "Ann", "entityType": "person", "observations": ["pilot"]}
                assert not (
                    await client.call_tool("create_entities", {"entities": [entity]})
                ).is_error
                assert not (await client.call_tool("read_graph", {})).is_error
                missing = {"observations": [{"entityName": "Bob", "contents": ["x"]}]}
                assert (await client.call_tool("add_observations", missing)).is_error

    asyncio.run(run())
    return log.read_text().splitlines()


def test_stdio_is_quiet_one_line_per_error(make_client: Any, tmp_path: Path) -> None:
    mz = make_client("mcp-quiet")
    lines = _stderr_of_session(mz, tmp_path)
    assert len(lines) == 1, lines
    assert lines[0].startswith("morphz-mcp: ") and "Bob" in lines[0]
    verbose = _stderr_of_session(mz, tmp_path, "-v")
    assert len(verbose) > 3 and any("HTTP Request" in line for line in verbose), verbose


def test_a_refused_token_is_not_called_unreachable(make_client: Any) -> None:
    """A server that answered 401 was reached: the one line says what it answered."""
    mz = make_client("mcp-refused")
    env = {**os.environ, "MORPHZ_URL": str(mz._http.base_url).rstrip("/"), "MORPHZ_TOKEN": "mz_x"}
    done = subprocess.run(
        [str(COMMAND)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, lines
    assert "answered 401" in lines[0] and "cannot reach" not in lines[0], lines
