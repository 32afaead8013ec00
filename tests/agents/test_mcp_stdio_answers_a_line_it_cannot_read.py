"""`morphz-mcp` over stdio answers a line that is no JSON-RPC message (truncated, not JSON,
a lone surrogate) with error -32700 and `"id": null`, as /mcp/ over HTTP does, writes one
line on stderr, and goes on reading: the SDK's transport used to drop such a line, and the
client waited for ever."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from typing import Any

COMMAND = shutil.which("morphz-mcp", path=os.path.dirname(sys.executable))

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"},
    },
}
UNREADABLE = [
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"',
    "this is not json",
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"append","arguments":'
    '{"kind":"user_message","content":"lone \\ud800 x"}}}',
]


def test_each_unreadable_line_is_answered_and_the_next_is_read(make_client: Any) -> None:
    mz = make_client("mcp-unreadable")
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        *UNREADABLE,
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    ]
    env = {
        **os.environ,
        "MORPHZ_URL": str(mz._http.base_url).rstrip("/"),
        "MORPHZ_TOKEN": mz.token,
        "MORPHZ_CONTEXT": mz.slug,
    }
    # stdin stays open until the last request is answered (at end of input the server
    # stops, and may drop what it was still doing); a dropped line leaves its answer
    # missing, and the deadline bounds the wait.
    server = subprocess.Popen(
        [str(COMMAND)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    timer = threading.Timer(120, server.kill)
    timer.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("\n".join(lines) + "\n")
        server.stdin.flush()
        answers = []
        for line in server.stdout:
            answers.append(json.loads(line))
            if answers[-1].get("id") == 9:
                break
        server.stdin.close()
        stderr = server.stderr.read() if server.stderr else ""
        server.wait()
    finally:
        timer.cancel()
        server.kill()
    errors = [a for a in answers if "error" in a]
    assert [e["id"] for e in errors] == [None] * len(UNREADABLE), answers
    assert all(e["error"]["code"] == -32700 for e in errors), errors
    assert all(e["error"]["message"].startswith("Parse error: ") for e in errors), errors
    listed = next(a for a in answers if a.get("id") == 9)
    assert any(t["name"] == "search" for t in listed["result"]["tools"])
    warned = [line for line in stderr.splitlines() if "-32700" in line]
    assert len(warned) == len(UNREADABLE), stderr
