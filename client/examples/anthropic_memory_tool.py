"""Anthropic's memory tool (`memory_20250818`) backed by Morphz (`MorphzMemoryTool`). Runs
offline: the commands a model would send are sent here as the SDK's tool runner sends them
(`tool.call(input)`); with a real model, pass the tool to
`Anthropic().beta.messages.tool_runner(model=..., max_tokens=..., messages=..., tools=[tool])`.

Run with the server up (`./dev run`) and a context token:
    MORPHZ_TOKEN=mz_... python client/examples/anthropic_memory_tool.py
"""

import os

from anthropic.lib.tools import ToolError
from morphz_client import MorphzClient
from morphz_client.anthropic_memory import MorphzMemoryTool

COMMANDS = [
    {"command": "create", "path": "/memories/user.md", "file_text": "name: Ada\n"},
    {"command": "str_replace", "path": "/memories/user.md", "old_str": "Ada", "new_str": "Ada L"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "delete", "path": "/memories/user.md"},
]

url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
with MorphzClient(url, os.environ["MORPHZ_TOKEN"], context=os.environ.get("MORPHZ_CONTEXT")) as mz:
    tool = MorphzMemoryTool(mz)
    for command in COMMANDS:
        try:
            print(f"{command['command']}: {tool.call(command)}")
        except ToolError as exc:  # the tool runner returns it to the model with is_error
            print(f"{command['command']} error: {exc.content}")
