"""Admin for following the work: a batch page shows its history inline. Labels, leases, events and
frozen gold are read-only here; changes go through the actions (API, pages, commands)."""
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from . import actions
from .accounts import check_username
from .models import (
    Annotation,
    Assignment,
    Batch,
    Campaign,
    CampaignSettings,
    Disagreement,
    Event,
    GoldLabel,
    GoldVersion,
    Invitation,
    Membership,
    QCReview,
    QCSampleItem,
)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class EventInline(ReadOnlyInline):
    model = Event
    fields = ("created_at", "kind", "from_state", "to_state", "round", "actor", "reason", "figures")
    readonly_fields = fields
    ordering = ("id",)


class MembershipInline(ReadOnlyInline):
    """Members are added and (de)activated on the Memberships page, through the actions."""
    model = Membership
    fields = ("user", "role", "active", "created_at")
    readonly_fields = fields


class SettingsInline(ReadOnlyInline):
    model = CampaignSettings
    fields = ("version", "overlap", "min_reading_seconds", "batch_size", "qc_sample_size", "overall_threshold",
              "class_threshold", "disagreement_policy", "max_rounds", "note", "created_at")
    readonly_fields = fields


class ReviewInline(ReadOnlyInline):
    model = QCReview
    fields = ("round", "reviewer", "decision", "override", "reason", "decided_at")
    readonly_fields = fields


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    """Campaigns are created through actions.create_campaign (the API, the pages, the commands), which
    checks the benchmark, tasks and settings and makes the first settings version and the manager; here
    they are followed, renamed and described, not added."""

    list_display = ("name", "benchmark", "protocol", "source", "created_at")
    list_filter = ("protocol", "benchmark")
    search_fields = ("name",)
    readonly_fields = ("benchmark", "tasks", "protocol", "source", "selection", "created_by", "created_at")
    inlines = [SettingsInline, MembershipInline]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Adding a member and (de)activating one go through actions.add_member and set_member_active, so each
    is checked and recorded as an event; campaign, user and role of a membership never change."""

    list_display = ("campaign", "user", "role", "active", "created_at")
    list_filter = ("role", "active", "campaign")
    search_fields = ("user__username", "campaign__name")
    list_select_related = ("campaign", "user")
    autocomplete_fields = ("user",)

    def get_fields(self, request, obj=None):
        return ("campaign", "user", "role") if obj is None else ("campaign", "user", "role", "active", "created_at")

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("campaign", "user", "role", "created_at")

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        if change:
            if "active" in form.changed_data:
                actions.set_member_active(obj, actor=request.user, active=obj.active)
            return
        membership = actions.add_member(obj.campaign, actor=request.user, user=obj.user, role=obj.role)
        obj.pk, obj.active, obj.created_at = membership.pk, membership.active, membership.created_at


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("__str__", "state", "round", "accepted_below_threshold", "updated_at")
    list_filter = ("state", "campaign", "accepted_below_threshold")
    readonly_fields = ("campaign", "number", "state", "round", "settings", "accepted_below_threshold", "created_at",
                       "updated_at")
    inlines = [ReviewInline, EventInline]
    actions = ["reclaim_leases"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Reclaim expired leases of these batches' campaigns")
    def reclaim_leases(self, request, queryset):
        campaigns = Campaign.objects.filter(batches__in=queryset).distinct()
        count = sum(actions.reclaim_expired_leases(campaign=campaign) for campaign in campaigns)
        self.message_user(request, f"{count} expired leases reclaimed", messages.SUCCESS)


class ViewOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Invitation)
class InvitationAdmin(ViewOnlyAdmin):
    """Invitations are answered by the person on their home page and withdrawn on the people page."""

    list_display = ("id", "campaign", "user", "role", "invited_by", "state", "created_at", "decided_at")
    list_filter = ("state", "role", "campaign")
    list_select_related = ("campaign", "user", "invited_by")


@admin.register(Assignment)
class AssignmentAdmin(ViewOnlyAdmin):
    list_display = ("id", "campaign", "item", "annotator", "round", "slot", "status", "served_at", "expires_at")
    list_filter = ("status", "campaign")
    list_select_related = ("campaign", "item", "annotator")


@admin.register(Annotation)
class AnnotationAdmin(ViewOnlyAdmin):
    list_display = ("id", "campaign", "item", "annotator", "round", "value", "excluded", "dwell_seconds",
                    "superseded_at")
    list_filter = ("campaign", "round", "excluded")
    search_fields = ("item__external_id", "annotator__username")
    list_select_related = ("campaign", "item", "annotator")


@admin.register(Disagreement)
class DisagreementAdmin(ViewOnlyAdmin):
    list_display = ("id", "campaign", "batch_item", "round", "status", "method", "resolved_value", "resolved_by")
    list_filter = ("status", "method", "campaign")


class SampleInline(ReadOnlyInline):
    model = QCSampleItem
    fields = ("position", "batch_item", "annotator_value", "qc_value", "qc_by", "qc_at")
    readonly_fields = fields


@admin.register(QCReview)
class QCReviewAdmin(ViewOnlyAdmin):
    list_display = ("__str__", "reviewer", "decision", "override", "decided_at")
    list_filter = ("decision", "override")
    inlines = [SampleInline]


@admin.register(Event)
class EventAdmin(ViewOnlyAdmin):
    list_display = ("created_at", "campaign", "batch", "kind", "from_state", "to_state", "round", "actor")
    list_filter = ("kind", "campaign")


class GoldLabelInline(ReadOnlyInline):
    model = GoldLabel
    fields = ("item", "value", "method", "votes", "margin")
    readonly_fields = fields


@admin.register(GoldVersion)
class GoldVersionAdmin(ViewOnlyAdmin):
    list_display = ("__str__", "campaign", "created_at", "frozen_at")
    inlines = [GoldLabelInline]


class RefusesLookalikes:
    """The admin's account forms refuse a username that looks like another account's (accounts.check_username)."""

    def clean_username(self):
        username = super().clean_username() if hasattr(super(), "clean_username") else self.cleaned_data["username"]
        check_username(username, exclude_pk=self.instance.pk)
        return username


class AccountAdmin(UserAdmin):
    add_form = type("AddAccountForm", (RefusesLookalikes, UserAdmin.add_form), {})
    form = type("AccountForm", (RefusesLookalikes, UserAdmin.form), {})


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)
