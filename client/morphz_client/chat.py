"""A terminal chat whose memory lives in Morphz, so it remembers across restarts.

    MORPHZ_URL=http://127.0.0.1:8000 MORPHZ_TOKEN=mz_... OPENAI_API_KEY=... \\
        python -m morphz_client.chat --context SLUG [--provider openai|anthropic] [--model M]

Each line you type is a user message; the memory agent loop runs the model until it
answers. `/context` prints the compiled context, `/quit` (or end of input) leaves.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from morphz_client.agent import ChatModel, MemoryAgent
from morphz_client.client import MorphzClient
from morphz_client.errors import (
    AuthError,
    MorphzError,
    NotFoundError,
    TextOmittedError,
    prompt_text,
)


def chat(
    agent: MemoryAgent, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, prompt: str = "> "
) -> None:
    """Read lines from `stdin` until `/quit` or end of input; print each answer."""
    while True:
        stdout.write(prompt)
        stdout.flush()
        line = stdin.readline()
        if not line or line.strip() == "/quit":
            stdout.write("\n")
            return
        text = line.strip()
        if not text:
            continue
        try:
            if text == "/context":
                stdout.write(prompt_text(agent.mz.evaluate(continuation=True)) + "\n")
                continue
            turn = agent.run(text)
        except TextOmittedError as exc:
            stdout.write(f"  ({exc})\n")
            continue
        for step in turn.steps:
            for result in step.tool_results:
                stdout.write(f"  [{result['action']} -> {result['ref']}]\n")
        stdout.write(turn.answer.strip() + "\n")
        if turn.status != "answered":
            stdout.write(f"  ({turn.status})\n")


def main(argv: list[str] | None = None, model: ChatModel | None = None) -> int:
    """The `morphz-chat` command: chat in the terminal with a model whose memory is one Morphz
    context (MORPHZ_URL, MORPHZ_TOKEN, MORPHZ_CONTEXT; the provider's usual variables). Returns
    the exit status: 0 at the end of input; before anything is written, 2 with one clear line
    for a missing key, a refused token or an unknown context, 1 for an unreachable server."""
    parser = argparse.ArgumentParser(description="Chat with a model whose memory is Morphz.")
    parser.add_argument("--context", default=os.environ.get("MORPHZ_CONTEXT"))
    parser.add_argument("--url", default=os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("MORPHZ_TOKEN"))
    parser.add_argument("--provider", choices=("openai", "anthropic"), default=None)
    parser.add_argument("--model", default=None, help="default: MORPHZ_MODEL")
    parser.add_argument("--thread", default=None)
    args = parser.parse_args(argv)
    # Every check happens before the first write, so a failed start leaves no open request.
    if not args.token:
        return _fail(2, "set MORPHZ_TOKEN (or pass --token)")
    if model is None:
        from morphz_client.llm import AnthropicModel, OpenAIModel, model_from_env

        if args.model:
            os.environ["MORPHZ_MODEL"] = args.model
        try:
            model = model_from_env(args.provider)
        except Exception as exc:  # the SDKs raise their own errors for a missing key
            return _fail(2, f"cannot set up the model: {exc}")
        assert isinstance(model, OpenAIModel | AnthropicModel)
        client = model.client
        if not (getattr(client, "api_key", None) or getattr(client, "auth_token", None)):
            name = "ANTHROPIC_API_KEY" if isinstance(model, AnthropicModel) else "OPENAI_API_KEY"
            return _fail(2, f"set {name} (the model's API key)")
    try:
        mz = MorphzClient(args.url, args.token, context=args.context)
        mz.context()
    except AuthError:
        return _fail(2, f"Morphz at {args.url} refused the token (MORPHZ_TOKEN)")
    except NotFoundError:
        return _fail(2, f"Morphz at {args.url} has no context {args.context!r} for this token")
    except MorphzError as exc:
        return _fail(1, f"cannot reach Morphz at {args.url}: {exc}")
    with mz:
        chat(MemoryAgent(mz, model, thread=args.thread))
    return 0


def _fail(code: int, message: str) -> int:
    sys.stderr.write(f"morphz chat: {message}\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
