"""A stand-in for the paid model services, on loopback: one HTTP server that speaks the
OpenAI Chat Completions and the Anthropic Messages wire formats for tool calls, so the real
`openai` and `anthropic` SDK code paths run without a network.

Its "model" is a policy: `policy(system, prompt, tool_names) -> (text, [(name, arguments)])`.
Every request body is kept in `requests` for the tests to inspect."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[str, str, list[str]], tuple[str, list[tuple[str, dict[str, Any]]]]]


class FakeProviders:
    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests: list[dict[str, Any]] = []
        self.url = ""

    def openai(self, body: dict[str, Any]) -> dict[str, Any]:
        system = next(m["content"] for m in body["messages"] if m["role"] == "system")
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        names = [t["function"]["name"] for t in body.get("tools", [])]
        text, calls = self.policy(system, prompt, names)
        n = len(self.requests)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }

    def anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][0]["content"]
        if isinstance(prompt, list):
            prompt = "".join(block.get("text", "") for block in prompt)
        system = body.get("system")
        if isinstance(system, list):
            system = "".join(block.get("text", "") for block in system)
        names = [t["name"] for t in body.get("tools", [])]
        text, calls = self.policy(system or "", prompt, names)
        n = len(self.requests)
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        content += [
            {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(calls)
        ]
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }


@contextmanager
def fake_providers(policy: Policy) -> Iterator[FakeProviders]:
    fake = FakeProviders(policy)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            path = self.path.split("?")[0]
            fake.requests.append(
                {
                    "path": path,
                    "body": body,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                }
            )
            if path.endswith("/chat/completions"):
                answer = fake.openai(body)
            elif path.endswith("/v1/messages"):
                answer = fake.anthropic(body)
            else:
                self.send_error(404)
                return
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
