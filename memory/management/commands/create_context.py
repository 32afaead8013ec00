from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory.contexts import create_context, issue_token, setting_default
from memory.errors import MorphzError
from memory.management.data_command import DataCommand


class Command(DataCommand):
    help = "Create a context and print a new API token for it (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--grace-ticks", type=int, default=setting_default("grace_ticks"))
        parser.add_argument("--capacity-tokens", type=int, default=None)
        parser.add_argument(
            "--observation-budget",
            type=int,
            default=setting_default("observation_budget_tokens"),
            help="tokens one observation may take in the model input; larger ones are previewed",
        )
        parser.add_argument(
            "--token-name", default="agent", help="a name people will recognise in the history"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            context = create_context(
                options["slug"],
                name=options["name"],
                grace_ticks=options["grace_ticks"],
                capacity_tokens=options["capacity_tokens"],
                observation_budget_tokens=options["observation_budget"],
            )
        except MorphzError as exc:
            raise CommandError(exc.message) from None
        issued = issue_token(context, name=options["token_name"])
        self.stdout.write(f"created context {context.slug}; API token (shown once):")
        self.stdout.write(issued.raw)
