"""What a token's scope allows (R65). Plain Python: one table, read by the API and admin.

How it works: docs/internals.md, section `memory/scopes.py`."""

from __future__ import annotations

from memory.errors import ErrorCode, MorphzError
from memory.kinds import ADMIN_SCOPE, AGENT_SCOPE, ERASE_SCOPE, READ_SCOPE, TOKEN_SCOPES

READ = "read"
WRITE = "write"
ERASE = "erase"
ADMIN = "admin"
CAPABILITIES = (READ, WRITE, ERASE, ADMIN)
# Each capability as an act, for a refusal's message (an MCP tool's caller sees it too).
ACTS: dict[str, str] = {
    READ: "read this context",
    WRITE: "change the context (events, evaluations, transactions, replies, forks, settings)",
    ERASE: "erase",
    ADMIN: "administer the context",
}

ALLOWED: dict[str, frozenset[str]] = {
    READ_SCOPE: frozenset({READ}),
    AGENT_SCOPE: frozenset({READ, WRITE}),
    ERASE_SCOPE: frozenset({READ, ERASE}),
    ADMIN_SCOPE: frozenset(CAPABILITIES),
}
assert set(ALLOWED) == set(TOKEN_SCOPES)


class ScopeInsufficient(MorphzError):
    """403: the token's scope does not allow this (nothing was done)."""

    code = ErrorCode.SCOPE_INSUFFICIENT

    def __init__(self, scope: str, capability: str, what: str) -> None:
        needed = sorted(s for s, caps in ALLOWED.items() if capability in caps)
        super().__init__(
            f"a token of scope {scope!r} may not {what}; it takes a token of scope "
            + " or ".join(repr(s) for s in needed),
            details=[{"scope": scope, "needs": needed}],
        )


def allows(scope: str, capability: str) -> bool:
    """Whether a token of `scope` has `capability` (unknown scopes have none)."""
    return capability in ALLOWED.get(scope, frozenset())


def require(scope: str, capability: str, what: str) -> None:
    """Raise ScopeInsufficient unless `scope` has `capability`; `what` names the act."""
    if not allows(scope, capability):
        raise ScopeInsufficient(scope, capability, what)
