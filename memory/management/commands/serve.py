from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve Morphz (HTTP + websockets) with uvicorn on HOST:PORT (default 127.0.0.1:8000)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workers", type=int, default=1)

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn

        self.stdout.write(
            f"Morphz serving at http://{settings.HOST}:{settings.PORT}/ (admin: /admin/, API: /api/v1/)"
        )
        uvicorn.run(
            "morphz.asgi:application",
            host=settings.HOST,
            port=settings.PORT,
            workers=options["workers"],
            log_level="info",
            lifespan="off",
            proxy_headers=False,
        )
