"""A scripted model on loopback speaking the OpenAI Responses API (`POST /v1/responses`) and
the Anthropic Messages API (`POST /v1/messages`), so the real SDKs' HTTP paths run offline.

`script(body) -> list of output items` answers each request: for Responses, Responses API
output items (`message`, `function_call`); for Messages, content blocks (`text`,
`tool_use`). Every request body is kept in `requests`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[dict[str, Any]], list[dict[str, Any]]]


@dataclass
class Loopback:
    script: Script
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)

    def responses(self, body: dict[str, Any]) -> dict[str, Any]:
        n = len(self.requests)
        return {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": 1_700_000_000,
            "model": body.get("model", "scripted"),
            "status": "completed",
            "output": self.script(body),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "metadata": {},
            "temperature": None,
            "top_p": None,
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 15,
            },
        }

    def messages(self, body: dict[str, Any]) -> dict[str, Any]:
        content = self.script(body)
        uses_tool = any(block["type"] == "tool_use" for block in content)
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if uses_tool else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }


def message(text: str, n: int = 0) -> dict[str, Any]:
    """A Responses API assistant message item."""
    return {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any], n: int = 0) -> dict[str, Any]:
    """A Responses API function call item."""
    return {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


@contextmanager
def loopback(script: Script) -> Iterator[Loopback]:
    served = Loopback(script)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            path = self.path.split("?")[0]
            if path.endswith("/responses"):
                answer = served.responses(body)
            elif path.endswith("/messages"):
                answer = served.messages(body)
            else:
                self.send_error(404)
                return
            served.requests.append({"path": path, "body": body})
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
