"""Invitations: a role a manager may not give alone (policy.account_reach: the person works in campaigns the
manager does not manage, or holds a site-wide role) is offered, and the membership is made only when the person
accepts it on their own pages. The manager sees it pending and may withdraw it; the person accepts or declines."""
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from core.errors import ActionError, Code

from ..models import EventKind, Invitation, InvitationState, Membership, Role
from ..policy import roles_of
from ._common import record_event, require_role
from .campaigns import join


def invite_member(campaign, *, actor, user, role):
    """A pending invitation of `user` to `role` in the campaign (the one already pending, if any)."""
    require_role(actor, campaign, {Role.MANAGER}, "add members")
    if role not in Role.values:
        raise ActionError(Code.INVALID_CAMPAIGN, f"Unknown role {role!r}; expected one of {Role.values}.")
    if user.pk == actor.pk:
        raise ActionError(Code.FORBIDDEN, "You cannot invite yourself.")
    if Membership.objects.filter(campaign=campaign, user=user, role=role, active=True).exists():
        raise ActionError(Code.DUPLICATE, f"{user} is already {role} in this campaign.")
    with transaction.atomic():
        pending = Invitation.objects.select_for_update().filter(campaign=campaign, user=user, role=role,
                                                                state=InvitationState.PENDING).first()
        if pending is not None:
            return pending
        invitation = Invitation.objects.create(campaign=campaign, user=user, role=role, invited_by=actor)
        record_event(campaign, EventKind.INVITATION_SENT, actor=actor,
                     figures={"user": user.get_username(), "role": role, "invitation": invitation.pk})
    return invitation


def _pending(invitation, *, for_user=None):
    """The invitation locked, while pending; a person other than `for_user` learns nothing of it (not found)."""
    invitation = Invitation.objects.select_for_update().select_related("campaign", "user").get(pk=invitation.pk)
    if for_user is not None and invitation.user_id != for_user.pk:
        raise ActionError(Code.NOT_FOUND, gettext("No such invitation."))
    if invitation.state != InvitationState.PENDING:
        raise ActionError(Code.NOT_ACTIVE, gettext("This invitation was already %(state)s.")
                          % {"state": invitation.get_state_display()})
    return invitation


def _close(invitation, state, *, actor, kind):
    invitation.state, invitation.decided_at = state, timezone.now()
    invitation.save(update_fields=["state", "decided_at"])
    record_event(invitation.campaign, kind, actor=actor,
                 figures={"user": invitation.user.get_username(), "role": invitation.role,
                          "invitation": invitation.pk})


def accept_invitation(invitation, *, actor):
    """The invited person joins with the offered role. The invitation lapses when whoever sent it no longer
    manages the campaign (staff always do)."""
    with transaction.atomic():
        invitation = _pending(invitation, for_user=actor)
        inviter = invitation.invited_by
        lapsed = inviter is None or Role.MANAGER not in roles_of(inviter, invitation.campaign)
        if lapsed:
            _close(invitation, InvitationState.WITHDRAWN, actor=None, kind=EventKind.INVITATION_WITHDRAWN)
        else:
            _close(invitation, InvitationState.ACCEPTED, actor=actor, kind=EventKind.INVITATION_ACCEPTED)
            if not Membership.objects.filter(campaign=invitation.campaign, user=actor, role=invitation.role,
                                             active=True).exists():
                join(invitation.campaign, actor=actor, user=actor, role=invitation.role,
                     figures={"invitation": invitation.pk, "invited_by": inviter.get_username()})
    if lapsed:
        raise ActionError(Code.NOT_ACTIVE, gettext("Whoever invited you no longer manages this campaign; the "
                                                   "invitation has lapsed."))
    return invitation


def decline_invitation(invitation, *, actor):
    with transaction.atomic():
        invitation = _pending(invitation, for_user=actor)
        _close(invitation, InvitationState.DECLINED, actor=actor, kind=EventKind.INVITATION_DECLINED)
    return invitation


def withdraw_invitation(invitation, *, actor):
    """A manager of the campaign takes a pending invitation back."""
    require_role(actor, invitation.campaign, {Role.MANAGER}, "change members")
    with transaction.atomic():
        invitation = _pending(invitation)
        _close(invitation, InvitationState.WITHDRAWN, actor=actor, kind=EventKind.INVITATION_WITHDRAWN)
    return invitation

