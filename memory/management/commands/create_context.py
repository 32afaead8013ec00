from __future__ import annotations

from typing import Any, cast

from django.core.management.base import CommandError, CommandParser
from django.db.models import Field

from memory.contexts import create_context, issue_token
from memory.errors import MorphzError
from memory.management.data_command import DataCommand
from memory.models import Context


def model_default(field: str) -> int:
    """The default the Context model declares for `field` (one place for each setting)."""
    found = Context._meta.get_field(field)
    assert isinstance(found, Field)
    return cast(int, found.default)


class Command(DataCommand):
    help = "Create a context and print a new API token for it (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--grace-ticks", type=int, default=model_default("grace_ticks"))
        parser.add_argument("--capacity-tokens", type=int, default=None)
        parser.add_argument(
            "--observation-budget",
            type=int,
            default=model_default("observation_budget_tokens"),
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
