from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from memory.contexts import issue_token
from memory.errors import MorphzError
from memory.kinds import AGENT_SCOPE, TOKEN_SCOPES
from memory.management.data_command import DataCommand
from memory.models import Context
from memory.times import LATEST


class Command(DataCommand):
    help = "Print a new API token for an existing context (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument(
            "--name", default="agent", help="a name people will recognise in the history"
        )
        parser.add_argument(
            "--scope",
            default=AGENT_SCOPE,
            choices=TOKEN_SCOPES,
            help="read: reads, recall, search; agent (default): also writes memory; erase: "
            "reads and erases; admin: everything (unfreeze, screening, forks past the limit)",
        )
        parser.add_argument(
            "--expires-in-days",
            type=float,
            default=None,
            help="the token is refused after this many days (default: never)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        context = Context.objects.filter(slug=options["slug"]).first()
        if context is None:
            raise CommandError(f"no context with slug {options['slug']!r}")
        days = options["expires_in_days"]
        if days is not None and not days > 0:  # NaN too
            raise CommandError("--expires-in-days must be more than 0")
        try:
            expires = timezone.now() + timedelta(days=days) if days is not None else None
        except OverflowError:
            raise CommandError(
                f"--expires-in-days {days:g} is past the last time that can be stored, "
                f"{LATEST.date()}"
            ) from None
        try:
            issued = issue_token(
                context, name=options["name"], scope=options["scope"], expires_at=expires
            )
        except MorphzError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from None
        until = f", expires {expires.isoformat(timespec='seconds')}" if expires else ""
        self.stdout.write(
            f"new {issued.token.scope} API token for {context.slug}{until} (shown once):"
        )
        self.stdout.write(issued.raw)
