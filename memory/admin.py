"""Django admin (R41): contexts, settings and tokens are managed here; history is read-only.

Nothing here writes model fields directly: saves go through `memory.contexts`.

Every action checks the person's model permissions, not only the staff flag (R65):
`ACTION_PERMISSIONS` says which one each needs; Django offers an action only to people who
have it and refuses it to anyone else. Revoking tokens and erasing ask for a confirmation.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from memory import contexts
from memory.admin_actions import PermissionChecks, confirmation, confirmed, erase_action_for
from memory.kinds import TOKEN_SCOPES
from memory.models import ApiToken, Context, Erasure, Event, Frame, Relation, TransactionRecord


class ReadOnlyAdmin(admin.ModelAdmin):
    """History is written by the engine only: no add, change or delete in admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ApiTokenInline(admin.TabularInline):
    model = ApiToken
    extra = 0
    fields = (
        "name",
        "key_prefix",
        "scope",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ContextForm(forms.ModelForm):
    class Meta:
        model = Context
        fields = ("slug", "name", *contexts.SETTINGS_FIELDS)
        help_texts = {
            # Admin renders help text as HTML: a written <slug> would vanish as a tag.
            "slug": "The context's id in URLs: /api/v1/contexts/SLUG/ and /contexts/SLUG/.",
            "grace_ticks": "How many ticks a retiring frame stays in the model's input before it "
            "is retired (a tick is one model call that brought in new outside facts).",
            "capacity_tokens": "The budget of the model's input (the active context), in tokens.",
            "pressure_percent": "From this share of the capacity the level is 'pressure': the "
            "agent is told to digest observations and slim frames.",
            "maintenance_percent": "From this share the level is 'maintenance': new external "
            "actions are refused until usage falls below the exit threshold.",
            "maintenance_exit_percent": "Maintenance ends when usage falls below this share "
            "(lower than the maintenance threshold, so the gate does not flap).",
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            # A field that failed its own check is absent: its default stands in for it.
            values = contexts.settings_of(Context())
            values.update({name: data[name] for name in contexts.SETTINGS_FIELDS if name in data})
            contexts.validate_settings(**values)
        except contexts.InvalidRequest as exc:
            raise forms.ValidationError(exc.message) from None
        return data

    def _post_clean(self) -> None:
        """Django then checks the table's constraints, which say in SQL what `clean` said in
        words: once `clean` has refused the settings, the constraint's raw name ("Constraint
        “context_thresholds_ordered” is violated") is dropped from beside it."""
        super()._post_clean()  # type: ignore[misc]
        raw = {str(c.get_violation_error_message()) for c in Context._meta.constraints}
        errors = self.errors.get(NON_FIELD_ERRORS)
        if errors and any(str(e) not in raw for e in errors):
            kept = [str(e) for e in errors if str(e) not in raw]
            self.errors[NON_FIELD_ERRORS] = self.error_class(kept, error_class="nonfield")


def _set_frozen(request: HttpRequest, queryset: Any, frozen: bool) -> None:
    """Set each selected context's flag through `contexts.set_frozen` (row lock) and say so."""
    for context in queryset:
        contexts.set_frozen(context.pk, frozen)
    messages.success(request, "Frozen." if frozen else "Unfrozen.")


@admin.register(Context)
class ContextAdmin(PermissionChecks, admin.ModelAdmin):
    form = ContextForm

    def get_queryset(self, request: HttpRequest) -> Any:
        # An import's or replay's context under construction is not anyone's to open.
        return super().get_queryset(request).filter(scratch=False)

    list_display = (
        "slug",
        "name",
        "version",
        "tick",
        "used_tokens",
        "capacity_tokens",
        "frozen",
        "screening",
        "lineage",
        "created_at",
        "explorer_link",
    )
    search_fields = ("slug", "name")
    readonly_fields = (
        "version",
        "tick",
        "last_seq",
        "used_tokens",
        "in_maintenance",
        "created_at",
        "frozen",
        "screening",
        "unverified_import",
        "lineage",
        "forks_of_this",
    )
    fields = ("slug", "name", *contexts.SETTINGS_FIELDS, *readonly_fields)
    inlines = [ApiTokenInline]
    actions = [
        "issue_token_action",
        *(f"issue_{scope}_token_action" for scope in TOKEN_SCOPES if scope != "agent"),
        "freeze_action",
        "unfreeze_action",
        "fork_action",
    ]

    @admin.display(description="forked from")
    def lineage(self, obj: Context) -> str:
        """The chain of sources: `alpha@v12 <- alpha-fork@v3` (oldest first)."""
        chain: list[str] = []
        current: Context | None = obj
        seen: set[int] = set()
        while current is not None and current.forked_version is not None:
            if current.pk in seen:
                break
            seen.add(current.pk)
            source = current.forked_from
            chain.append(f"{source.slug if source else '(deleted)'}@v{current.forked_version}")
            current = source
        return " <- ".join(reversed(chain)) if chain else "-"

    @admin.display(description="forks")
    def forks_of_this(self, obj: Context) -> str:
        """The direct forks as `slug@vN`, by slug, comma-separated; "-" when none."""
        forks = [f"{c.slug}@v{c.forked_version}" for c in obj.forks.order_by("slug")]
        return ", ".join(forks) if forks else "-"

    @admin.action(description="Freeze (refuse every write)", permissions=["freeze"])
    def freeze_action(self, request: HttpRequest, queryset: Any) -> None:
        """Freeze each selected context (R54)."""
        _set_frozen(request, queryset, True)

    @admin.action(description="Unfreeze", permissions=["freeze"])
    def unfreeze_action(self, request: HttpRequest, queryset: Any) -> None:
        """Unfreeze each selected context."""
        _set_frozen(request, queryset, False)

    @admin.action(description="Fork now (new context and token, shown once)", permissions=["fork"])
    def fork_action(self, request: HttpRequest, queryset: Any) -> None:
        """Fork each selected context at its current version; the new token is shown once in
        the success message."""
        from memory.versions.forks import fork_context

        for context in queryset:
            result = fork_context(context, token_name=f"admin:{request.user}")
            messages.success(
                request,
                f"Forked {context.slug} at version {result.version} into "
                f"{result.context.slug}; token (copy it now): {result.token.raw}",
            )

    @admin.display(description="explorer")
    def explorer_link(self, obj: Context) -> str:
        """An HTML link to the context's page in the explorer."""
        url = reverse("explorer:context_detail", args=[obj.slug])
        return format_html('<a href="{}">open in the explorer</a>', url)

    def get_view_on_site_url(self, obj: Context | None = None) -> str | None:
        """The "view on site" button opens the context in the explorer."""
        return reverse("explorer:context_detail", args=[obj.slug]) if obj else None

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return (*self.readonly_fields, "slug") if obj else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Context, form: Any, change: bool) -> None:
        """Create through `contexts.create_context`, or change the edited settings through
        `contexts.update_context_settings` (row lock; InvalidRequest, ContextFrozen)."""
        if change:
            saved = contexts.update_context_settings(
                obj.pk, **{f: form.cleaned_data[f] for f in form.changed_data if f != "slug"}
            )
        else:
            values: dict[str, Any] = contexts.settings_of(obj)
            saved = contexts.create_context(obj.slug, name=obj.name, **values)
        obj.pk = saved.pk

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        # History models are read-only in admin, but deleting a whole context takes them
        # along: only the permission to delete contexts is needed.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_model(self, request: HttpRequest, obj: Context) -> None:
        """Delete through `contexts.delete_context`, which takes the row lock first."""
        contexts.delete_context(obj.pk)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        """Delete each selected context through `contexts.delete_context`, one at a time."""
        for context in queryset:
            contexts.delete_context(context.pk)

    @admin.action(description="Issue a new API token (shown once)", permissions=["issue_token"])
    def issue_token_action(self, request: HttpRequest, queryset: Any) -> None:
        """Issue one new agent-scope API token per selected context; each raw token is
        shown once."""
        self._issue(request, queryset, "agent")

    @admin.action(description="Issue a read-only token (shown once)", permissions=["issue_token"])
    def issue_read_token_action(self, request: HttpRequest, queryset: Any) -> None:
        """One read-scope token per selected context."""
        self._issue(request, queryset, "read")

    @admin.action(description="Issue an erase token (shown once)", permissions=["issue_token"])
    def issue_erase_token_action(self, request: HttpRequest, queryset: Any) -> None:
        """One erase-scope token per selected context."""
        self._issue(request, queryset, "erase")

    @admin.action(description="Issue an admin token (shown once)", permissions=["issue_token"])
    def issue_admin_token_action(self, request: HttpRequest, queryset: Any) -> None:
        """One admin-scope token per selected context."""
        self._issue(request, queryset, "admin")

    def _issue(self, request: HttpRequest, queryset: Any, scope: str) -> None:
        for context in queryset:
            issued = contexts.issue_token(context, name=f"issued by {request.user}", scope=scope)
            messages.success(
                request, f"New {scope} token for {context.slug} (copy it now): {issued.raw}"
            )


@admin.register(ApiToken)
class ApiTokenAdmin(PermissionChecks, ReadOnlyAdmin):
    list_display = (
        "context",
        "name",
        "key_prefix",
        "scope",
        "expires_at",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("context", "scope")
    actions = ["revoke_action"]

    @admin.action(description="Revoke selected tokens", permissions=["revoke"])
    def revoke_action(self, request: HttpRequest, queryset: Any) -> TemplateResponse | None:
        """After a confirmation page, revoke each selected token now; an already revoked
        one keeps its first time."""
        if not confirmed(request):
            return confirmation(
                request,
                queryset,
                action="revoke_action",
                title="Revoke tokens?",
                question="Agents using these tokens are refused from now on. This cannot be "
                "undone (issue a new token instead).",
                confirm="Yes, revoke",
                items=[f"{t} ({t.name or 'unnamed'}, {t.scope})" for t in queryset],
            )
        for token in queryset:
            contexts.revoke_token(token.pk)
        messages.success(request, "Revoked.")
        return None

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Needed for the revoke action to be offered; the form itself has no editable field.
        return obj is None and self.has_revoke_permission(request)


@admin.register(Event)
class EventAdmin(PermissionChecks, ReadOnlyAdmin):
    actions = [erase_action_for("event")]

    list_display = (
        "context",
        "seq",
        "kind",
        "thread",
        "active",
        "request_state",
        "size_chars",
        "created_at",
    )
    list_filter = ("kind", "active", "context")
    search_fields = ("content",)


@admin.register(Frame)
class FrameAdmin(PermissionChecks, ReadOnlyAdmin):
    actions = [erase_action_for("frame")]

    list_display = ("context", "frame_id", "revision", "status", "protected", "retire_due_tick")
    list_filter = ("status", "protected", "context")
    search_fields = ("frame_id",)


@admin.register(Relation)
class RelationAdmin(ReadOnlyAdmin):
    list_display = ("context", "subject", "name", "object", "created_version", "removed_version")
    list_filter = ("name", "context")


@admin.register(TransactionRecord)
class TransactionRecordAdmin(ReadOnlyAdmin):
    list_display = (
        "context",
        "id",
        "status",
        "base_version",
        "committed_version",
        "author",
        "created_at",
    )
    list_filter = ("status", "context")
    search_fields = ("text", "reason")


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyAdmin):
    """Tombstones: what was erased, when, by whom and why (never the text)."""

    list_display = (
        "context",
        "target",
        "ref",
        "label",
        "matches",
        "erased_by",
        "erased_at",
        "origin",
    )
    list_filter = ("target", "context")
    search_fields = ("ref", "reason", "erased_by")
