"""Bearer-token authentication for agents (R38)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from memory.contexts import authenticate_token, recently_authenticated, token_refusal
from memory.models import ApiToken


def bearer_token(header: str | bytes) -> str | None:
    """The token of an Authorization header's value, `Bearer <token>`, or None when the
    value is empty, names another scheme or carries no token. Schemes are case-insensitive
    (RFC 9110 section 11.1); the token is taken without the spaces around it. Every reader
    of the header calls this: REST authentication, its refusals, forks and MCP."""
    text = header.decode("latin-1") if isinstance(header, bytes) else header
    scheme, _, raw = text.partition(" ")
    raw = raw.strip()
    if scheme.lower() != ContextTokenAuthentication.keyword.lower() or not raw:
        return None
    return raw


def request_bearer(request: Any) -> str | None:
    """`bearer_token` of a Django or DRF request's Authorization header."""
    return bearer_token(authentication.get_authorization_header(request))


class TokenUser:
    """The principal of a request authenticated by a context token."""

    is_authenticated = True
    is_active = True
    is_staff = False

    def __init__(self, token: ApiToken) -> None:
        self.token = token
        self.context = token.context

    def __str__(self) -> str:
        return f"token:{self.token.key_prefix}"


class ContextTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <token>`, checked against the database on every request,
    except by the methods a view lists in `commit_checks_token`, whose write checks the
    token itself: there a token this process found live in the last minute is taken from
    memory, the write checks it inside its own database transaction (no round trip of its
    own), and any refusal checks it before answering (`ContextAPIView.handle_exception`)."""

    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[TokenUser, ApiToken] | None:
        if not authentication.get_authorization_header(request):
            return None
        raw = request_bearer(request)
        if raw is None:
            raise exceptions.AuthenticationFailed("use Authorization: Bearer <token>")
        view = (getattr(request, "parser_context", None) or {}).get("view")
        token = None
        if request.method in getattr(view, "commit_checks_token", ()):
            token = recently_authenticated(raw)
            # Read by `api.base.ContextAPIView.handle_exception`: any refusal of this
            # request checks the token in the database before it is answered.
            request._request.token_from_memory = token is not None
        if token is None:
            token = authenticate_token(raw)
        if token is None:
            raise exceptions.AuthenticationFailed(token_refusal(raw))
        return TokenUser(token), token

    def authenticate_header(self, request: Any) -> str:
        return self.keyword


class ContextTokenScheme(OpenApiAuthenticationExtension):
    """Documents the bearer token in the OpenAPI schema (registered on import)."""

    target_class = "api.auth.ContextTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "a context's API token: `Authorization: Bearer mz_...`",
        }
