from __future__ import annotations

from typing import Any

from rest_framework.throttling import SimpleRateThrottle


class ContextTokenRateThrottle(SimpleRateThrottle):
    """Requests per token (agents) or per user (people)."""

    scope = "context_token"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if token is not None and hasattr(token, "pk"):
            return f"throttle:token:{token.pk}"
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            return f"throttle:user:{user.pk}"
        return f"throttle:ip:{self.get_ident(request)}"
