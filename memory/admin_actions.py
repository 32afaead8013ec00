"""Admin actions' shared parts (R65): the permission each needs, the confirmation page,
and erasing from the admin (R64). Used by `memory.admin`."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest
from django.template.response import TemplateResponse

from memory.errors import MorphzError

# The model permission each admin action needs (app label `memory`).
ACTION_PERMISSIONS = {
    "issue_token": "memory.add_apitoken",
    "revoke": "memory.change_apitoken",
    "freeze": "memory.change_context",
    "fork": "memory.add_context",
    "erase": "memory.add_erasure",
}


class PermissionChecks:
    """`has_<name>_permission` for each entry of ACTION_PERMISSIONS (Django's action
    `permissions=[name]` calls it)."""

    def _allowed(self, request: HttpRequest, name: str) -> bool:
        return bool(request.user.has_perm(ACTION_PERMISSIONS[name]))

    def has_issue_token_permission(self, request: HttpRequest) -> bool:
        """Whether the person may issue tokens (`memory.add_apitoken`)."""
        return self._allowed(request, "issue_token")

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        """Whether the person may revoke tokens (`memory.change_apitoken`)."""
        return self._allowed(request, "revoke")

    def has_freeze_permission(self, request: HttpRequest) -> bool:
        """Whether the person may freeze and unfreeze (`memory.change_context`)."""
        return self._allowed(request, "freeze")

    def has_fork_permission(self, request: HttpRequest) -> bool:
        """Whether the person may fork (`memory.add_context`)."""
        return self._allowed(request, "fork")

    def has_erase_permission(self, request: HttpRequest) -> bool:
        """Whether the person may erase (`memory.add_erasure`)."""
        return self._allowed(request, "erase")


def confirmation(
    request: HttpRequest,
    queryset: Any,
    *,
    action: str,
    title: str,
    question: str,
    confirm: str,
    items: list[str],
    ask_reason: bool = False,
) -> TemplateResponse:
    """The page asking to confirm an action on the selected rows (posts it back with
    `post=yes`)."""
    return TemplateResponse(
        request,
        "admin/memory/confirm_action.html",
        {
            **admin.site.each_context(request),
            "title": title,
            "question": question,
            "confirm": confirm,
            "items": items,
            "queryset": queryset,
            "action": action,
            "ask_reason": ask_reason,
        },
    )


def confirmed(request: HttpRequest) -> bool:
    """Whether the confirmation page was answered yes."""
    return request.POST.get("post") == "yes"


def erase_selected(request: HttpRequest, refs_by_context: dict[int, list[str]]) -> None:
    """Erase the refs through `memory.erasure.erase`, one request per context; the reason
    comes from the confirmation page."""
    from memory.erasure.erase import erase

    reason = request.POST.get("reason", "")
    for context_id, refs in refs_by_context.items():
        try:
            result = erase(
                context_id,
                refs=refs,
                reason=reason,
                erased_by=f"person:{request.user.get_username()}",
            )
        except MorphzError as exc:  # a bad reason, an item not erasable
            messages.error(request, exc.message)
            return
        places = ", ".join(f"{slug}: {n}" for slug, n in result.contexts.items())
        messages.success(request, f"Erased {len(refs)} item(s); places masked: {places}.")


def erase_action_for(kind: str) -> Any:
    """An admin action erasing the selected events or frames (R64), after a confirmation
    page that asks for the reason."""

    @admin.action(description=f"Erase selected {kind}s from all history", permissions=["erase"])
    def erase_action(modeladmin: Any, request: HttpRequest, queryset: Any) -> Any:
        if not confirmed(request) or not request.POST.get("reason", "").strip():
            return confirmation(
                request,
                queryset,
                action="erase_action",
                title=f"Erase {kind}s?",
                question=f"The selected {kind}s' text is masked everywhere it is stored or "
                "served, in this context and every fork of its lineage; a tombstone stays. "
                "This cannot be undone.",
                confirm="Yes, erase",
                items=[str(obj) for obj in queryset],
                ask_reason=True,
            )
        refs: dict[int, list[str]] = {}
        for obj in queryset:
            refs.setdefault(obj.context_id, []).append(obj.ref if kind == "event" else obj.frame_id)
        erase_selected(request, refs)
        return None

    return erase_action
