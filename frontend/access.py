"""Who may open which page: the checks the pages share (the rules themselves live in the apps' selectors and
permissions)."""
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from annotation import accounts, policy
from annotation.models import Campaign, Role
from annotation.permissions import can_create_campaigns
from benchmarks.permissions import can_import_items


def campaign_with_role(request, pk, allowed, what):
    """The campaign and the person's access there (policy.CampaignAccess, resolved once for the request) when they
    hold one of `allowed` there; the 403 page otherwise (members and outsiders alike, so the refusal says nothing
    about the campaign). `allowed` may be a function of the campaign (its worker role, say), so that the campaign
    is read once."""
    campaign = get_object_or_404(Campaign.objects.select_related("benchmark"), pk=pk)
    allowed = allowed(campaign) if callable(allowed) else allowed
    access = policy.access_for(request, campaign)
    if not access.holds(allowed):
        raise PermissionDenied(policy.refusal(allowed, what))
    return campaign, access


def managed_campaigns(user):
    ids = policy.campaigns_with_role(user, {Role.MANAGER})
    campaigns = policy.visible_campaigns(user)
    return campaigns if ids is None else campaigns.filter(pk__in=ids)


def may_manage(user):
    """Whether the manager's pages have anything for this person."""
    return (can_create_campaigns(user) or can_import_items(user) or accounts.may_create_accounts(user)
            or managed_campaigns(user).exists())
