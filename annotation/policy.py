"""Who may see and do what in a campaign: the roles that read each kind of data, staff's roles everywhere,
the gold panel's blind voters, the blind QC, and the campaigns, labels and benchmarks a person reads. The one home of
these rules: selectors, permissions, serializers, pages and reports ask these functions. Within one campaign they
ask CampaignAccess (at the end), resolved once per request by access_for, as Sentry's request.access: the
permissions, the API's blindness, the serializers, the pages and the flags the pages hand their templates and
scripts all read its answers."""
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

from django.db.models import F, Q
from django.utils.translation import gettext, gettext_noop

from benchmarks.permissions import reads_all_gold

from .models import Annotation, BatchState, Campaign, Membership, Role

# Roles that may read each kind of campaign data (gold, QC data and other people's labels are the
# sensitive ones: annotators see only their own leases and labels).
READ_BATCHES = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.EXPERT, Role.VIEWER})
READ_LABELS = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.EXPERT, Role.VIEWER})
READ_QC = frozenset({Role.MANAGER, Role.QC, Role.TRAINER, Role.VIEWER})
READ_GOLD = frozenset({Role.MANAGER, Role.EXPERT, Role.VIEWER})
READ_DISAGREEMENTS = frozenset({Role.MANAGER, Role.TRAINER, Role.EXPERT, Role.VIEWER})
RESOLVE = frozenset({Role.EXPERT, Role.TRAINER})
# Per-annotator estimates (competence under the annotator model, accuracy against gold): the QC's figures.
READ_ANNOTATOR_FIGURES = READ_QC


# A refusal's words in the person's language: each role with its article, and what the refused person wanted
# (the `what` the actions and pages pass; one not listed here is shown as given).
ROLE_NAMES = {Role.MANAGER: gettext_noop("a manager"), Role.ANNOTATOR: gettext_noop("an annotator"),
              Role.QC: gettext_noop("a quality controller"), Role.EXPERT: gettext_noop("an expert"),
              Role.TRAINER: gettext_noop("a trainer"), Role.VIEWER: gettext_noop("a viewer (researcher)")}
REFUSED_ACTS = (gettext_noop("take items"), gettext_noop("submit labels"), gettext_noop("change labels"),
                gettext_noop("flag items"), gettext_noop("label its items"), gettext_noop("hand in a batch"),
                gettext_noop("review batches"), gettext_noop("resolve disagreements"),
                gettext_noop("see QC reviews"), gettext_noop("see its disagreements"),
                gettext_noop("see its dashboard"), gettext_noop("manage it"), gettext_noop("give roles"),
                gettext_noop("add members"), gettext_noop("change members"), gettext_noop("reset passwords"),
                gettext_noop("change settings"), gettext_noop("cut batches"), gettext_noop("reopen batches"),
                gettext_noop("create gold versions"), gettext_noop("freeze gold versions"),
                gettext_noop("choose its gold"))


def refusal(roles, what):
    """The one wording of "only these roles may": "Only an annotator or a manager of this campaign may ...",
    in the person's language."""
    def named(role):
        if role in ROLE_NAMES:  # every Role
            return gettext(ROLE_NAMES[role])
        label = str(role)
        return f"{'an' if label[:1].lower() in 'aeiou' else 'a'} {label}"
    return gettext("Only %(roles)s of this campaign may %(what)s.") % {
        "roles": gettext(" or ").join(named(role) for role in sorted(roles)), "what": gettext(what)}


def roles_by_campaign(user):
    """{campaign id: roles} for every campaign where the user is an active member (one query, for lists)."""
    roles = defaultdict(set)
    for campaign_id, role in Membership.objects.filter(user=user, active=True).values_list("campaign_id", "role"):
        roles[campaign_id].add(role)
    return roles


STAFF_ROLES = frozenset({Role.MANAGER, Role.VIEWER})


def staff_roles(user):
    """The roles a user holds in every campaign without a membership: staff act as managers and viewers
    everywhere, never as workers. The one home of that rule."""
    return STAFF_ROLES if user and user.is_authenticated and user.is_staff else frozenset()


def holds_everywhere(user, roles):
    """Whether the user holds one of `roles` (any role when None) in every campaign."""
    return bool(staff_roles(user) and (roles is None or STAFF_ROLES & set(roles)))


def roles_of(user, campaign):
    """Active roles of a user in a campaign, staff's (staff_roles) included."""
    if not user or not user.is_authenticated:
        return frozenset()
    campaign_id = getattr(campaign, "pk", campaign)
    memberships = Membership.objects.filter(campaign_id=campaign_id, user=user, active=True).order_by()
    return frozenset(memberships.values_list("role", flat=True)) | staff_roles(user)


def campaigns_with_role(user, roles=None):
    """Ids of the campaigns where the user holds one of `roles` (any role when None); None means all (staff)."""
    if holds_everywhere(user, roles):
        return None
    memberships = Membership.objects.filter(user=user, active=True)
    if roles is not None:
        memberships = memberships.filter(role__in=roles)
    return memberships.values("campaign_id")


def account_reach(actor, user):
    """Why `user`'s account is not `actor`'s alone to act on (give them a role, reset their password), or None.

    A manager acts alone only on accounts whose every role lies in campaigns they manage and that hold no
    site-wide role (staff, a superuser, any permission: a researcher's gold reading, a campaign creator's): a
    reset would hand them the account, and a role given to someone who works elsewhere changes what they may do
    there (an annotator's role on a benchmark ends a researcher's reading of its gold). The rest goes to the
    person (an invitation they accept) or to an administrator. Staff act on every account, and everyone on their
    own."""
    if staff_roles(actor) or actor.pk == user.pk:
        return None
    name = user.get_username()
    if user.is_staff or user.is_superuser:
        return f"{name} holds a site-wide role (staff)"
    if user.get_all_permissions() or reads_all_gold(user):
        return f"{name} holds a site-wide role (researcher, or other permissions)"
    managed = campaigns_with_role(actor, {Role.MANAGER})
    if Membership.objects.filter(user=user, active=True).exclude(campaign_id__in=managed).exists():
        return f"{name} works in campaigns you do not manage"
    return None


def visible_campaigns(user):
    ids = campaigns_with_role(user)
    campaigns = Campaign.objects.select_related("benchmark")
    return campaigns if ids is None else campaigns.filter(pk__in=ids)


def labels_visible(user):
    """Annotations a user may read: all of a campaign for READ_LABELS roles (not a gold panel's voting
    experts: they vote blind; not what a blind QC may not read yet, qc_hidden_items), and always their own."""
    ids = campaigns_reading(user, READ_LABELS)
    if ids is None:
        return Annotation.objects.all()
    return Annotation.objects.filter(Q(campaign_id__in=ids) & ~Q(batch_item_id__in=qc_hidden_items(user))
                                     | Q(annotator=user))


def labels_found(user, labels):
    """Of `labels`, those the user may open by id (the role is then checked on the label's campaign): any of the
    campaigns they are a member of, less what a blind QC may not read yet (not found, as another campaign's),
    and always their own."""
    ids = campaigns_with_role(user)
    if ids is None:
        return labels
    return labels.filter(Q(campaign_id__in=ids) & ~Q(batch_item_id__in=qc_hidden_items(user)) | Q(annotator=user))


# ---------------------------------------------------------------- blindness and read scope
# One home for "experts vote blind": the experts who label a campaign (its worker role: a gold panel's voters,
# DialogBench's 3 experts) read nobody's labels, votes, names or gold (not through labels, disagreements,
# baseline, gold versions, reports or items); only their own labels. Every read below and the permissions,
# pages and reports ask these functions.
BLIND_ROLE = Role.EXPERT
# Roles that read a campaign's items (dialogues and fields) through the items API; annotators and QC
# see items only through their leases and QC samples.
READ_ITEMS = frozenset({Role.MANAGER, Role.TRAINER, Role.EXPERT, Role.VIEWER})
# Roles that label: their benchmarks' source gold stays hidden from them.
LABELLING = frozenset({Role.ANNOTATOR, Role.QC})


def role_votes_blind(role, campaign):
    """Whether holding `role` in `campaign` means voting blind: experts where experts label."""
    return role == BLIND_ROLE and campaign.worker_role == BLIND_ROLE


def reading_roles(campaign, roles):
    """`roles` less the one that votes blind in this campaign: the roles that read others' work there."""
    return frozenset(role for role in roles if not role_votes_blind(role, campaign))


def _blind_memberships():
    return Q(role=BLIND_ROLE, campaign__worker_role=BLIND_ROLE)


def campaigns_reading(user, roles):
    """Ids of the campaigns where the user reads what `roles` read (blind voters left out); None: all (staff)."""
    if holds_everywhere(user, roles):
        return None
    return (Membership.objects.filter(user=user, active=True, role__in=roles).exclude(_blind_memberships())
            .values("campaign_id"))


def _labelling(user):
    return Membership.objects.filter(Q(role__in=LABELLING) | _blind_memberships(), user=user, active=True)


def labelling_benchmarks(user):
    """Benchmarks where the user labels (annotator, QC, or a blind voter) in some campaign."""
    return _labelling(user).values("campaign__benchmark_id")


def campaigns_with_readable_gold(user, campaigns):
    """The ids among `campaigns` (a Campaign queryset) whose gold, report and people the user may read: staff all
    of them; researchers (reads_all_gold) every campaign, and the others those where they read gold; neither those
    of the benchmarks where they label."""
    if staff_roles(user):
        return set(campaigns.values_list("pk", flat=True))
    if not reads_all_gold(user):
        campaigns = campaigns.filter(pk__in=campaigns_reading(user, READ_GOLD))
    return set(campaigns.exclude(benchmark_id__in=labelling_benchmarks(user)).values_list("pk", flat=True))


def member_scope(user):
    """What a campaign member reads of benchmarks, as Q objects over Benchmark, Task and Item, and the
    benchmarks whose source gold (and item meta) they read (registered with benchmarks.permissions)."""
    active = Membership.objects.filter(user=user, active=True)
    everything = user.has_perm("annotation.add_campaign")  # who creates campaigns chooses among all benchmarks
    campaigns = active.values("campaign_id")
    reading = active.filter(role__in=READ_ITEMS).values("campaign_id")
    gold = campaigns_reading(user, READ_GOLD)
    tasks_of = Campaign.tasks.through.objects.values("task_id")
    return {
        "benchmark": Q() if everything else Q(pk__in=Campaign.objects.filter(pk__in=campaigns).values("benchmark_id")),
        "task": Q() if everything else Q(pk__in=tasks_of.filter(campaign_id__in=campaigns)),
        "item": Q(task_id__in=tasks_of.filter(campaign_id__in=reading)),
        "gold": (Q(pk__in=Campaign.objects.filter(pk__in=gold).values("benchmark_id"))
                 & ~Q(pk__in=labelling_benchmarks(user))),
        "labels_on": Q(pk__in=labelling_benchmarks(user)),
    }


# ---------------------------------------------------------------- blind QC
# One home for "the QC reviews blind" (the settings' qc_blind): until the QC has decided a batch round, a QC who
# holds no other role that reads the campaign's labels reads none of that batch's labels, none of the names of
# the people who labelled it, and none of its label events (changed answers with their before and after, decided
# disagreements, flags, skips); each item of the current sample that has its QC label is shown in full, as the
# protocol intends (the QC gives their label first, then sees the others). The labels API, the raw export, the
# batch's items and events, the QC sample and the review page ask these functions.
QC_UNDECIDED = (BatchState.ANNOTATING, BatchState.HANDED_IN, BatchState.IN_REVIEW)  # the round's QC decision to come


# The roles that, held beside QC, let a QC read the campaign's labels (a blind voter's expert role does not).
# Asked in SQL across campaigns here and from the roles in CampaignAccess.reads_as_blind_qc; tests/annotation/
# test_access.py holds the two forms to one answer.
QC_SIGHTED_BY = READ_LABELS - {Role.QC}


def _blind_qc_campaigns(user):
    """Ids of the campaigns where the user is a QC and holds no other role that reads labels there."""
    if not user or not user.is_authenticated or staff_roles(user):
        return Membership.objects.none().values("campaign_id")
    others = (Membership.objects.filter(user=user, active=True, role__in=QC_SIGHTED_BY)
              .exclude(_blind_memberships()).values("campaign_id"))
    return (Membership.objects.filter(user=user, active=True, role=Role.QC).exclude(campaign_id__in=others)
            .values("campaign_id"))


def _qc_hidden(items):
    """Of `items` (BatchItems of campaigns where the user reads as a blind QC), the ids hidden from them now."""
    from .models import QCSampleItem

    items = items.filter(batch__settings__qc_blind=True, batch__state__in=QC_UNDECIDED)
    shown = QCSampleItem.objects.filter(review__round=F("review__batch__round"), qc_at__isnull=False)
    return items.exclude(pk__in=shown.values("batch_item_id")).values("pk")


def qc_hidden_items(user):
    """The batch items, in every campaign, whose labels, labellers' names and label events the user may not read
    yet (a queryset of BatchItem ids): the items of the batches of a qc_blind round not decided yet, in the
    campaigns where the user reads as a blind QC, less the items of the round's sample that have their QC label.
    For one campaign: CampaignAccess.qc_hidden_items."""
    from .models import BatchItem

    return _qc_hidden(BatchItem.objects.filter(campaign_id__in=_blind_qc_campaigns(user)))


# Events about one item's labels: left out for a blind QC while the item is hidden (their figures carry values,
# their actors are the labellers).
LABEL_EVENTS = ("label_changed", "disagreement_resolved", "item_flagged", "item_skipped")




# ---------------------------------------------------------------- the access object
@dataclass(frozen=True)
class CampaignAccess:
    """What one person may see and do in one campaign, resolved once (one query for their memberships) and read by
    the permissions, serializers, views, templates (as context flags) and scripts (as the page's data): the one
    home of each answer below. Build it with access_of(user, campaign), or access_for(request, campaign) for the
    request's user (memoised on the request)."""

    user: object
    campaign: Campaign
    roles: frozenset
    # Whether the person labels (annotator, QC, blind voter) in some campaign of this benchmark; None: not read yet.
    labels_benchmark: bool | None = None

    def holds(self, roles):
        """Whether the person holds one of `roles` here."""
        return bool(self.roles & set(roles))

    def reads(self, roles):
        """Whether the person reads what `roles` read here (a gold panel's blind voters do not)."""
        return bool(self.roles & reading_roles(self.campaign, roles))

    @property
    def reads_labels(self):
        """Everyone's labels, with the labellers' names."""
        return self.reads(READ_LABELS)

    @property
    def votes_blind(self):
        """Sees the campaign's answers without names: a labelling expert (a gold panel's voter) who holds no other
        role that reads everyone's labels here."""
        return self.campaign.worker_role == BLIND_ROLE and not self.reads_labels

    @property
    def labels(self):
        """Takes leases: holds the campaign's worker role (annotators, or a gold panel's experts)."""
        return self.campaign.worker_role in self.roles

    @property
    def may_manage(self):
        return Role.MANAGER in self.roles

    @property
    def reviews(self):
        """Takes the QC's part in reviews (starts them, labels the sample, decides)."""
        return Role.QC in self.roles

    @property
    def may_resolve(self):
        return self.holds(RESOLVE)

    @property
    def reads_as_blind_qc(self):
        """Reads this campaign as a blind QC would (before qc_blind and the batch are asked): a QC who holds no
        other role that reads labels here, and not staff."""
        return (not staff_roles(self.user) and Role.QC in self.roles
                and not self.reads(QC_SIGHTED_BY))

    def reviews_blind(self, batch):
        """Reviews this batch blind: its settings say qc_blind and the person reads as a blind QC."""
        return bool(batch.settings and batch.settings.qc_blind) and self.reads_as_blind_qc

    def qc_hidden_items(self):
        """This campaign's batch items the person may not read yet (policy.qc_hidden_items, for one campaign)."""
        from .models import BatchItem

        if not self.reads_as_blind_qc:
            return BatchItem.objects.none().values("pk")
        return _qc_hidden(BatchItem.objects.filter(campaign_id=self.campaign.pk))

    def qc_blind_batch(self, batch):
        """What of one batch a blind QC may not read yet: None when the person reads all of it; else a dict with
        the hidden batch items' ids (`batch_items`), their items' external ids (`items`) and the usernames of
        everyone who labelled the batch (`labellers`, whose names the batch's other events leave out meanwhile)."""
        from .models import BatchItem

        if not self.reads_as_blind_qc:
            return None
        rows = list(BatchItem.objects.filter(pk__in=self.qc_hidden_items(), batch_id=batch.pk)
                    .values_list("pk", "item__external_id"))
        if not rows:
            return None
        labellers = set(Annotation.objects.filter(batch_item__batch_id=batch.pk)
                        .values_list("annotator__username", flat=True).distinct())
        return {"batch_items": {pk for pk, _ in rows}, "items": {external for _, external in rows},
                "labellers": labellers}

    @property
    def reads_annotator_figures(self):
        """The annotator model's estimates, which read every label: the QC's figures, not while a label is hidden
        from a blind QC."""
        return self.holds(READ_ANNOTATOR_FIGURES) and not self.qc_hidden_items().exists()

    @cached_property
    def reads_gold(self):
        """Gold and the report: staff, and those who label nowhere on its benchmark and are researchers
        (reads_all_gold) or read its gold here (managers, viewers, experts; not blind voters)."""
        if not self.user or not self.user.is_authenticated:
            return False
        if staff_roles(self.user):
            return True
        if not (reads_all_gold(self.user) or self.reads(READ_GOLD)):
            return False
        if self.labels_benchmark is not None:
            return not self.labels_benchmark
        return not _labelling(self.user).filter(campaign__benchmark_id=self.campaign.benchmark_id).exists()


def access_of(user, campaign, roles=None):
    """The CampaignAccess of `user` in `campaign` (`roles`: their membership roles when already read, for lists).
    One query reads their memberships on the campaign's benchmark: their roles here, and whether they label on it."""
    if roles is not None:
        return CampaignAccess(user, campaign, frozenset(roles) | staff_roles(user))
    if not user or not user.is_authenticated:
        return CampaignAccess(user, campaign, frozenset(), labels_benchmark=False)
    rows = list(Membership.objects.filter(user=user, active=True, campaign__benchmark_id=campaign.benchmark_id)
                .order_by().values_list("campaign_id", "role", "campaign__worker_role"))
    roles = frozenset(role for campaign_id, role, _ in rows if campaign_id == campaign.pk) | staff_roles(user)
    labels = any(role in LABELLING or role == BLIND_ROLE == worker_role for _, role, worker_role in rows)
    return CampaignAccess(user, campaign, roles, labels_benchmark=labels)


def access_for(request, campaign):
    """The request user's CampaignAccess in `campaign`, resolved once per request (a DRF request and the page's
    request share it)."""
    request = getattr(request, "_request", request)
    cache = request.__dict__.setdefault("_campaign_access", {})
    if campaign.pk not in cache:
        cache[campaign.pk] = access_of(request.user, campaign)
    return cache[campaign.pk]
