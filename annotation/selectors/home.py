"""A person's home page: what waits for them in a campaign, and the language of their pages."""
from ..models import BatchState, DisagreementStatus, Invitation, InvitationState
from ..policy import READ_BATCHES, READ_DISAGREEMENTS
from .leases import open_lease
from .progress import left_for


def waiting_for(access):
    """What waits for this person in one campaign (their home page; `access`: their policy.CampaignAccess there):
    items to label and their open lease, batches to review, open disagreements, whether they see the dashboard."""
    user, campaign = access.user, access.campaign
    waiting = {}
    if access.labels:
        # What this person can take: the leasing rule's count (left_for), not the items others hold or had.
        waiting["to_label"] = left_for(campaign, user)
        waiting["lease"] = open_lease(campaign, user)
    if access.reviews:
        waiting["to_review"] = list(campaign.batches.filter(state__in=(BatchState.HANDED_IN, BatchState.IN_REVIEW))
                                    .order_by("number"))
    if access.holds(READ_DISAGREEMENTS):
        waiting["disagreements"] = campaign.disagreements.filter(status=DisagreementStatus.OPEN).count()
    waiting["dashboard"] = access.holds(READ_BATCHES)
    return waiting


def campaign_language(user) -> str:
    """The language of the campaign the person joined last to work in (a labelling, QC, expert or trainer role) among
    their active ones whose current settings name one ("" when none does): their pages' language until they choose
    one themselves. A campaign they manage or read as a researcher does not set it: a manager's pages follow the
    manager's own language, not that of the last campaign they made for others."""
    from django.db.models import OuterRef, Subquery

    from ..models import CampaignSettings, Membership
    from ..policy import STAFF_ROLES

    latest = CampaignSettings.objects.filter(campaign=OuterRef("campaign")).order_by("-version").values("language")[:1]
    languages = (Membership.objects.filter(user=user, active=True).exclude(role__in=STAFF_ROLES)
                 .annotate(language=Subquery(latest))
                 .exclude(language="").order_by("-created_at", "-id").values_list("language", flat=True))
    return languages.first() or ""


def pending_invitations(user):
    """The invitations waiting for the person's answer, with their campaigns (their home page lists them)."""
    return (Invitation.objects.filter(user=user, state=InvitationState.PENDING)
            .select_related("campaign", "campaign__benchmark", "invited_by").order_by("created_at", "pk"))


def campaign_invitations(campaign):
    """The campaign's pending invitations (its people page lists them)."""
    return (Invitation.objects.filter(campaign=campaign, state=InvitationState.PENDING)
            .select_related("user", "invited_by").order_by("created_at", "pk"))
