"""Role permissions per campaign, composed with DRF operators: `IsManager | IsQC & ReadOnly`.

View-level checks only require a signed-in user; the role is decided on the object (the campaign it
belongs to), after the view's queryset has already hidden campaigns the user is not a member of.
The actions check roles again, so the pages and commands that call them directly are held to the same rules.
"""
from rest_framework.permissions import SAFE_METHODS, BasePermission

from benchmarks.permissions import staff_or_holder

from .models import Campaign, Role
from .policy import READ_BATCHES, READ_DISAGREEMENTS, READ_LABELS, READ_QC, RESOLVE, access_for, reading_roles


def campaign_of(obj):
    return obj if isinstance(obj, Campaign) else obj.campaign


class CampaignRole(BasePermission):
    roles = frozenset()
    blind = False  # True: a gold panel's voting experts are left out (policy.reading_roles)

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj):
        return access_for(request, campaign_of(obj)).holds(self.allowed(campaign_of(obj)))

    def allowed(self, campaign):
        return reading_roles(campaign, self.roles) if self.blind else self.roles


def with_roles(name, roles, blind=False):
    return type(name, (CampaignRole,), {"roles": frozenset(roles), "blind": blind})


IsManager = with_roles("IsManager", {Role.MANAGER})
IsQC = with_roles("IsQC", {Role.QC})
IsMember = with_roles("IsMember", set(Role.values))
CanReadBatches = with_roles("CanReadBatches", READ_BATCHES)
CanReadQC = with_roles("CanReadQC", READ_QC)


class CanReadGold(CampaignRole):
    """The campaign's gold (versions, baseline): policy.CampaignAccess.reads_gold (staff, researchers and the roles
    that read gold; but for staff, nobody who labels on its benchmark)."""

    def has_object_permission(self, request, view, obj):
        return access_for(request, campaign_of(obj)).reads_gold


CanReadDisagreements = with_roles("CanReadDisagreements", READ_DISAGREEMENTS)
# Others' names and votes (disagreements by guideline, batch histories and outcomes): not for blind voters.
CanReadVotes = with_roles("CanReadVotes", READ_DISAGREEMENTS, blind=True)
CanReadBatchWork = with_roles("CanReadBatchWork", READ_BATCHES, blind=True)
CanResolve = with_roles("CanResolve", RESOLVE)


class IsWorker(CampaignRole):
    """Takes leases: annotators, or the experts of a gold panel."""

    def allowed(self, campaign):
        return {campaign.worker_role}


CanReadLabels = with_roles("CanReadLabels", READ_LABELS, blind=True)  # everyone's labels; not for blind voters


class IsOwner(BasePermission):
    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj):
        return obj.annotator_id == request.user.pk


class ReadOnly(BasePermission):
    def has_permission(self, request, view):
        return request.method in SAFE_METHODS

    def has_object_permission(self, request, view, obj):
        return request.method in SAFE_METHODS


def can_create_campaigns(user):
    """Staff, or holders of annotation.add_campaign (who become the new campaign's manager)."""
    return staff_or_holder(user, "annotation.add_campaign")


class CanCreateCampaign(BasePermission):
    def has_permission(self, request, view):
        return can_create_campaigns(request.user)
