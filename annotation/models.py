"""Campaigns of human work on benchmark items: who labels what, in which round, and what became final.

Integrity lives in constraints: an annotator appears once per (item, round), a lease holds one of the
item's numbered slots and a slot is held once, a batch item never has more leases than it needs.
Writes go through `annotation.actions`; nothing here is ever deleted (superseded, expired or frozen
instead).
"""
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from benchmarks.models import Benchmark, Item, Task

User = settings.AUTH_USER_MODEL


class Protocol(models.TextChoices):
    PRODUCTION = "production", _("production annotation with QC (DiQAD)")
    HUMAN_BASELINE = "human_baseline", _("human baseline, raters blind to each other (DialogBench, KoDialogBench)")
    GOLD_PANEL = "gold_panel", _("expert panel whose majority becomes gold")


class Policy(models.TextChoices):
    ADJUDICATE = "adjudicate", "an expert or trainer decides"
    EXTRA_ANNOTATOR = "extra_annotator", "one more annotator labels the item"
    MAJORITY = "majority", "majority vote with the stated tie rule"


class TieRule(models.TextChoices):
    # Same names as metrics.aggregation.TIE_RULES; "none" sends a tie to adjudication.
    NONE = "none", "a tie goes to adjudication"
    FIRST = "first", "a tie goes to the tied label given first"
    LOWEST = "lowest", "a tie goes to the lowest tied label"
    RANDOM = "random", "a tie goes to a tied label drawn at random (seeded)"


class Aggregation(models.TextChoices):
    # Same names as metrics.aggregation.ANNOTATOR_METHODS, plus majority vote.
    MAJORITY = "majority", _("majority vote (the protocol's rule)")
    DAWID_SKENE = "dawid_skene", _("Dawid-Skene (a confusion matrix per annotator)")
    ONE_COIN = "one_coin", _("one-coin Dawid-Skene (one competence per annotator)")
    MACE = "mace", _("MACE (competence and spamming per annotator)")


# An annotator model's short name, for a column header.
ANNOTATOR_MODEL_NAMES = {Aggregation.DAWID_SKENE: _("Dawid-Skene"), Aggregation.ONE_COIN: _("one-coin Dawid-Skene"),
                         Aggregation.MACE: _("MACE")}


class AnnotatorKind(models.TextChoices):
    # Same names as metrics.alt_test.EPSILON: what a judge may give away against these people.
    CROWD = "crowd", "crowd workers (epsilon 0.1)"
    SKILLED = "skilled", "skilled annotators: trained, students (epsilon 0.15)"
    EXPERT = "expert", "experts: reliable, expensive (epsilon 0.2)"


class Selection(models.TextChoices):
    ALL = "all", "every item of the campaign, in a seeded order"
    ACTIVE = "active", "items drawn by the judge's uncertainty mixed with uniform, within a budget"


class Role(models.TextChoices):
    MANAGER = "manager", _("manager")
    ANNOTATOR = "annotator", _("annotator")
    QC = "qc", _("quality controller")
    EXPERT = "expert", _("expert")
    TRAINER = "trainer", _("trainer")
    VIEWER = "viewer", _("viewer (researcher)")


# Every role Campaign.worker_role can name.
WORKER_ROLES = (Role.ANNOTATOR, Role.EXPERT)
# Protocols with a QC step: a finished batch is handed in to QC. In the others a finished batch is complete: its
# final labels (the raters' or experts' majority) go to the baseline and the gold.
QC_PROTOCOLS = frozenset({Protocol.PRODUCTION})


class Campaign(models.Model):
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="campaigns")
    tasks = models.ManyToManyField(Task, related_name="campaigns")
    protocol = models.CharField(max_length=20, choices=Protocol.choices)
    selection = models.JSONField(default=dict, blank=True,
                                 help_text='Which items: {} for all items of the tasks, or {"external_ids": [...]}')
    source = models.CharField(max_length=100, blank=True, help_text="Set for imported work, e.g. 'import:fed'")
    worker_role = models.CharField(max_length=20, choices=[(role.value, role.label) for role in WORKER_ROLES],
                                   default=Role.ANNOTATOR,
                                   help_text="Who labels the items: annotators, or experts (a gold panel, "
                                             "DialogBench's 3-expert baseline); experts who label vote blind")
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    pinned_gold = models.ForeignKey("GoldVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                    help_text="The frozen gold this campaign's reports cite (set by its managers "
                                              "through actions.pin_gold_version); empty: the source gold")

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(protocol__in=Protocol.values), name="campaign_protocol_valid"),
            models.CheckConstraint(condition=Q(worker_role__in=WORKER_ROLES), name="campaign_worker_role_valid"),
            models.UniqueConstraint(fields=["benchmark", "source"], condition=~Q(source=""),
                                    name="campaign_one_import_per_source"),
        ]

    def __str__(self):
        return self.name

    @property
    def settings(self):
        """The newest settings version; running batches keep the version they were started with."""
        cached = getattr(self, "_current_settings", None)
        if cached is None:
            cached = self._current_settings = self.settings_versions.order_by("-version").first()
        return cached

    @property
    def has_qc(self):
        """Whether a finished batch goes to QC (QC_PROTOCOLS) or is complete as it is."""
        return self.protocol in QC_PROTOCOLS

    @staticmethod
    def worker_role_of(protocol):
        """Who takes leases by default: experts vote in a gold panel, annotators everywhere else (one of
        WORKER_ROLES). A campaign's own `worker_role` (its preset's) says who labels it."""
        return Role.EXPERT if protocol == Protocol.GOLD_PANEL else Role.ANNOTATOR


def validate_guidelines_by_language(value):
    """Guidelines per language: an object whose keys are codes of settings.LANGUAGES and whose values are texts."""
    codes = [code for code, _ in settings.LANGUAGES]
    if not isinstance(value, dict):
        raise ValidationError("Expected an object {language code: Markdown}, e.g. {\"ko\": \"...\"}.")
    unknown = sorted(str(key) for key in value if key not in codes)
    if unknown:
        raise ValidationError(f"Unknown language {', '.join(map(repr, unknown))}; expected one of "
                              f"{', '.join(codes)}.")
    not_text = sorted(key for key, text in value.items() if not isinstance(text, str))
    if not_text:
        raise ValidationError(f"The guidelines in {', '.join(not_text)} must be Markdown text.")


class CampaignSettings(models.Model):
    """One version of a campaign's settings and guidelines. Frozen once a batch has started with it.

    Every number has bounds, checked with the settings (actions.campaigns._clean_settings), wide enough for every
    protocol reproduced here (overlap 2-5 for people who label here, up to DICES' 123 raters per item for ratings
    imported from a study's file; batches of up to a whole benchmark's 100,000 items, leases of minutes,
    seconds of reading) and narrow enough that no value breaks a statement, a loop or a clock."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="settings_versions")
    version = models.PositiveIntegerField()
    overlap = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1), MaxValueValidator(1000)],
                                               help_text="k: distinct annotators per item and round")
    min_reading_seconds = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(3600)],
                                                      help_text="Enforced by the server from the lease")
    lease_minutes = models.PositiveIntegerField(default=30, validators=[MinValueValidator(1), MaxValueValidator(1440)])
    batch_size = models.PositiveIntegerField(default=2000,
                                             validators=[MinValueValidator(1), MaxValueValidator(100_000)])
    qc_sample_size = models.PositiveIntegerField(default=100,
                                                 validators=[MinValueValidator(1), MaxValueValidator(100_000)])
    qc_stratify = models.BooleanField(default=False, help_text="Draw the QC sample proportionally per final label")
    overall_threshold = models.DecimalField(max_digits=5, decimal_places=4, default=Decimal("0.92"),
                                            validators=[MinValueValidator(0), MaxValueValidator(1)])
    class_threshold = models.DecimalField(max_digits=5, decimal_places=4, default=Decimal("0.90"),
                                          validators=[MinValueValidator(0), MaxValueValidator(1)])
    max_rounds = models.PositiveSmallIntegerField(default=5, validators=[MinValueValidator(1), MaxValueValidator(100)])
    disagreement_policy = models.CharField(max_length=20, choices=Policy.choices, default=Policy.ADJUDICATE)
    tie_rule = models.CharField(max_length=10, choices=TieRule.choices, default=TieRule.NONE)
    max_extra_annotators = models.PositiveSmallIntegerField(default=1, validators=[MaxValueValidator(100)],
                                                            help_text="For the extra_annotator policy")
    items_per_task = models.PositiveIntegerField(null=True, blank=True,
                                                 validators=[MinValueValidator(1), MaxValueValidator(10_000_000)],
                                                 help_text="Seeded sample per task (human baseline); empty = all items")
    seed = models.BigIntegerField(default=0, validators=[MinValueValidator(0), MaxValueValidator(2 ** 63 - 1)])
    guidelines = models.TextField(blank=True, help_text="Markdown shown to every member")
    guidelines_by_language = models.JSONField(
        default=dict, blank=True, validators=[validate_guidelines_by_language],
        help_text="The guidelines in other languages, {language code: Markdown}: a person reads their page "
                  "language's, else the default guidelines")
    auto_hand_in = models.BooleanField(default=True, help_text="Hand a batch in by itself when its last item gets "
                                                               "its final label")
    qc_blind = models.BooleanField(default=False, help_text="The QC answers each sampled item before seeing its final "
                                                            "label (off: the QC checks the label shown)")
    aggregation = models.CharField(max_length=20, choices=Aggregation.choices, default=Aggregation.MAJORITY,
                                   help_text="The rule of the crowd's aggregate label in reports")
    annotator_kind = models.CharField(max_length=10, choices=AnnotatorKind.choices, default=AnnotatorKind.SKILLED,
                                      help_text="Who the annotators are, for the alternative annotator test")
    selection_mode = models.CharField(max_length=10, choices=Selection.choices, default=Selection.ALL,
                                      help_text="Which items are cut into batches")
    active_budget = models.PositiveIntegerField(null=True, blank=True,
                                                validators=[MinValueValidator(1), MaxValueValidator(10_000_000)],
                                                help_text="Active selection: items drawn for labels, on average")
    active_uniform_share = models.DecimalField(max_digits=4, decimal_places=3, default=Decimal("0.2"),
                                               validators=[MinValueValidator(0), MaxValueValidator(1)],
                                               help_text="Active selection: the uniform part of the draw")
    active_judge_run = models.PositiveIntegerField(null=True, blank=True,
                                                   help_text="Active selection: the model run whose uncertainty "
                                                             "draws the items")
    language = models.CharField(max_length=10, blank=True, default="", choices=settings.LANGUAGES,
                                help_text="The language its people work in: their pages' language unless they "
                                          "chose one (empty: the browser's)")
    note = models.CharField(max_length=300, blank=True, help_text="Why this version was made")
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    # What a settings change may touch; everything else identifies the version.
    EDITABLE = ("overlap", "min_reading_seconds", "lease_minutes", "batch_size", "qc_sample_size", "qc_stratify",
                "overall_threshold", "class_threshold", "max_rounds", "disagreement_policy", "tie_rule",
                "max_extra_annotators", "items_per_task", "seed", "guidelines", "guidelines_by_language",
                "auto_hand_in", "qc_blind", "aggregation", "annotator_kind", "selection_mode", "active_budget",
                "active_uniform_share", "active_judge_run", "language")

    class Meta:
        ordering = ["campaign_id", "version"]
        verbose_name_plural = "campaign settings"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "version"], name="settings_unique_version"),
            models.CheckConstraint(condition=Q(overlap__gte=1), name="settings_overlap_positive"),
            models.CheckConstraint(condition=Q(overall_threshold__gte=0, overall_threshold__lte=1)
                                   & Q(class_threshold__gte=0, class_threshold__lte=1), name="settings_thresholds_0_1"),
            models.CheckConstraint(condition=Q(disagreement_policy__in=Policy.values), name="settings_policy_valid"),
            models.CheckConstraint(condition=Q(tie_rule__in=TieRule.values), name="settings_tie_rule_valid"),
            models.CheckConstraint(condition=Q(aggregation__in=Aggregation.values), name="settings_aggregation_valid"),
            models.CheckConstraint(condition=Q(annotator_kind__in=AnnotatorKind.values),
                                   name="settings_annotator_kind_valid"),
            models.CheckConstraint(condition=Q(selection_mode__in=Selection.values), name="settings_selection_valid"),
            models.CheckConstraint(condition=Q(active_uniform_share__gte=0, active_uniform_share__lte=1),
                                   name="settings_active_uniform_share_0_1"),
        ]

    def __str__(self):
        return f"{self.campaign} v{self.version}"

    def clean(self):
        if self.selection_mode == Selection.ACTIVE:
            missing = {name: "Active selection needs it." for name in ("active_budget", "active_judge_run")
                       if getattr(self, name) is None}
            if missing:
                raise ValidationError(missing)

    def values(self):
        return {field: getattr(self, field) for field in self.EDITABLE}


class Membership(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="campaign_memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "role", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user", "role"], name="membership_unique_role"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self):
        return f"{self.user} {self.role} in {self.campaign}"


class OneTimePassword(models.Model):
    """A person whose password was handed to them by someone else (a new account, a manager's reset): they must
    choose their own at their next sign-in before anything else (frontend.middleware). The row goes when they do."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="one_time_password")
    set_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    set_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.user}: must change the password set at {self.set_at:%Y-%m-%d %H:%M}"


class InvitationState(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"


class Invitation(models.Model):
    """A role offered to a person whom the manager may not give it alone (policy.account_reach: they work in
    campaigns the manager does not manage, or hold a site-wide role): the membership is made only when the person
    accepts on their own pages. One pending invitation per campaign, person and role."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="invitations")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=20, choices=Role.choices)
    invited_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    state = models.CharField(max_length=20, choices=InvitationState.choices, default=InvitationState.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user", "role"], condition=Q(state="pending"),
                                    name="invitation_one_pending"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role_valid"),
        ]

    def __str__(self):
        return f"{self.user} invited as {self.role} in {self.campaign} ({self.state})"


class BatchState(models.TextChoices):
    OPEN = "open", _("open")
    ANNOTATING = "annotating", _("annotating")
    HANDED_IN = "handed_in", _("handed in")
    IN_REVIEW = "in_review", _("in review")
    ACCEPTED = "accepted", _("accepted")
    REJECTED = "rejected", _("rejected")


class Batch(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="batches")
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=20, choices=BatchState.choices, default=BatchState.OPEN)
    round = models.PositiveSmallIntegerField(default=1)
    settings = models.ForeignKey(CampaignSettings, null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="batches", help_text="The version this round runs under")
    accepted_below_threshold = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign_id", "number"]
        verbose_name_plural = "batches"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "number"], name="batch_unique_number"),
            models.CheckConstraint(condition=Q(state__in=BatchState.values), name="batch_state_valid"),
            models.CheckConstraint(condition=Q(round__gte=1), name="batch_round_positive"),
        ]

    def __str__(self):
        return f"{self.campaign} batch {self.number}"


class ItemStatus(models.TextChoices):
    PENDING = "pending", "waiting for labels"
    DISAGREEMENT = "disagreement", "labels differ; waiting for adjudication"
    LABELLED = "labelled", "final label"
    EXCLUDED = "excluded", "out of the data set (record kept)"


FINAL_STATUSES = (ItemStatus.LABELLED, ItemStatus.EXCLUDED)


class BatchItem(models.Model):
    """An item in a batch, with the current round's outcome. `taken` counts live leases and labels."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    batch = models.ForeignKey(Batch, on_delete=models.PROTECT, related_name="items")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="batch_items")
    position = models.PositiveIntegerField()
    needed = models.PositiveSmallIntegerField(default=1, help_text="k, plus extra annotators granted this round")
    taken = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.PENDING)
    final_value = models.JSONField(null=True, blank=True)
    final_method = models.CharField(max_length=30, blank=True)
    inclusion_probability = models.FloatField(null=True, blank=True, help_text=(
        "Active selection: the probability with which the item was drawn; empty when every item is cut"))
    # Kept by the database (triggers on annotation_annotation, migration 0017), whatever writes a label: the
    # labeller's page counts a batch's items with all their labels after every item from these, not from a
    # join of the batch's labels. Code never writes them (every save names its update_fields).
    labels = models.PositiveSmallIntegerField(default=0, editable=False,
                                              help_text="Labels given on the item in round labels_round")
    labels_round = models.PositiveSmallIntegerField(default=0, editable=False,
                                                    help_text="The latest round the item has labels in")

    class Meta:
        ordering = ["batch_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item"], name="batch_item_once_per_campaign"),
            models.UniqueConstraint(fields=["batch", "position"], name="batch_item_unique_position"),
            # The database, not the lease code, stops a k+1-th lease.
            models.CheckConstraint(condition=Q(taken__lte=models.F("needed")), name="batch_item_taken_le_needed"),
            models.CheckConstraint(condition=Q(status__in=ItemStatus.values), name="batch_item_status_valid"),
        ]
        indexes = [
            models.Index(fields=["batch", "position"], condition=Q(status="pending"), name="batch_item_pending"),
            models.Index(fields=["batch", "status"], name="batch_item_status"),
        ]

    def __str__(self):
        return f"{self.batch} #{self.position}"


class LeaseStatus(models.TextChoices):
    LEASED = "leased"
    SUBMITTED = "submitted"
    RELEASED = "released", "given back by the annotator"
    EXPIRED = "expired", "reclaimed after the lease ran out"


# A slot is held by a live lease or a submitted label; a person is tied to an item also when they skipped it.
HOLDS_SLOT = (LeaseStatus.LEASED, LeaseStatus.SUBMITTED)
HOLDS_PERSON = (LeaseStatus.LEASED, LeaseStatus.SUBMITTED, LeaseStatus.RELEASED)


class Assignment(models.Model):
    """A lease: one annotator, one item, one round, one numbered slot; dwell time runs from served_at."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    batch_item = models.ForeignKey(BatchItem, on_delete=models.PROTECT, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    annotator = models.ForeignKey(User, on_delete=models.PROTECT, related_name="assignments")
    round = models.PositiveSmallIntegerField()
    slot = models.PositiveSmallIntegerField()
    settings = models.ForeignKey(CampaignSettings, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=20, choices=LeaseStatus.choices, default=LeaseStatus.LEASED)
    served_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    inclusion_probability = models.FloatField(null=True, blank=True, help_text=(
        "Active selection: the item's probability of being drawn, as it was drawn (its batch item's)"))

    class Meta:
        ordering = ["-served_at"]
        constraints = [
            models.UniqueConstraint(fields=["batch_item", "annotator", "round"], condition=Q(status__in=HOLDS_PERSON),
                                    name="assignment_annotator_once_per_item_round"),
            models.UniqueConstraint(fields=["batch_item", "round", "slot"], condition=Q(status__in=HOLDS_SLOT),
                                    name="assignment_slot_held_once"),
            models.CheckConstraint(condition=Q(slot__gte=1), name="assignment_slot_positive"),
            models.CheckConstraint(condition=Q(status__in=LeaseStatus.values), name="assignment_status_valid"),
            models.CheckConstraint(condition=Q(expires_at__gt=models.F("served_at")),
                                   name="assignment_expires_after_served"),
        ]
        indexes = [
            models.Index(fields=["campaign", "annotator", "status"], name="assignment_mine"),
            models.Index(fields=["expires_at"], condition=Q(status="leased"), name="assignment_live_expiry"),
        ]

    def __str__(self):
        return f"{self.annotator} on {self.item_id} (round {self.round}, slot {self.slot})"


class Annotation(models.Model):
    """One person's answers to one item in one round. Kept forever; a later round marks it superseded."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="annotations")
    batch_item = models.ForeignKey(BatchItem, on_delete=models.PROTECT, related_name="annotations")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="annotations")
    annotator = models.ForeignKey(User, on_delete=models.PROTECT, related_name="annotations")
    assignment = models.OneToOneField(Assignment, null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="annotation", help_text="Empty for imported ratings")
    round = models.PositiveSmallIntegerField()
    slot = models.PositiveSmallIntegerField()
    settings = models.ForeignKey(CampaignSettings, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    answers = models.JSONField()
    value = models.JSONField(null=True, blank=True, help_text="The answer to the primary question")
    excluded = models.BooleanField(default=False)
    excluded_by = models.JSONField(default=list, blank=True, help_text="Question keys whose answer excludes the item")
    dwell_seconds = models.FloatField(null=True, blank=True, help_text="Server time from lease to submit")
    client_submission_id = models.UUIDField(null=True, blank=True, unique=True)
    submitted_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["batch_item_id", "round", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["batch_item", "annotator", "round"],
                                    name="annotation_once_per_annotator_round"),
            models.UniqueConstraint(fields=["batch_item", "round", "slot"], name="annotation_slot_once"),
            models.CheckConstraint(condition=Q(slot__gte=1), name="annotation_slot_positive"),
        ]
        indexes = [models.Index(fields=["campaign", "annotator"], name="annotation_mine")]

    def __str__(self):
        return f"{self.annotator} on {self.item_id} (round {self.round})"


class DisagreementStatus(models.TextChoices):
    OPEN = "open"
    RESOLVED = "resolved"


class Disagreement(models.Model):
    """The labels of an item differed on the primary question in one round; kept for trainers."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="disagreements")
    batch_item = models.ForeignKey(BatchItem, on_delete=models.PROTECT, related_name="disagreements")
    round = models.PositiveSmallIntegerField()
    settings = models.ForeignKey(CampaignSettings, on_delete=models.PROTECT, related_name="+",
                                 help_text="The guideline version the labels were given under")
    labels = models.JSONField(help_text="[{annotator, value}] as given")
    status = models.CharField(max_length=10, choices=DisagreementStatus.choices, default=DisagreementStatus.OPEN)
    method = models.CharField(max_length=20, blank=True, help_text="adjudicated | majority | extra_annotator")
    resolved_value = models.JSONField(null=True, blank=True)
    resolved_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["batch_item", "round"], name="disagreement_once_per_item_round"),
            models.CheckConstraint(condition=Q(status__in=DisagreementStatus.values), name="disagreement_status_valid"),
        ]

    def __str__(self):
        return f"disagreement on {self.batch_item} round {self.round}"


class QCReview(models.Model):
    """The QC of one batch round: the seeded sample drawn at hand-in, then the decision."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="+")
    batch = models.ForeignKey(Batch, on_delete=models.PROTECT, related_name="reviews")
    round = models.PositiveSmallIntegerField()
    reviewer = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="qc_reviews")
    decision = models.CharField(max_length=10, blank=True, help_text="accepted | rejected")
    reason = models.TextField(blank=True)
    override = models.BooleanField(default=False, help_text="Accepted although the rule said reject")
    figures = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # The draw's inputs, for audit only (annotation/audit.py); never serialised for annotators.
    sample_secret = models.CharField(max_length=64, blank=True, help_text="Drawn at hand-in; never shown")
    sample_inputs = models.JSONField(default=dict, blank=True,
                                     help_text="public seed, size, stratify and the (item, label) candidates")

    class Meta:
        ordering = ["batch_id", "round"]
        constraints = [models.UniqueConstraint(fields=["batch", "round"], name="qc_review_once_per_round")]

    def __str__(self):
        return f"QC of {self.batch} round {self.round}"


class QCSampleItem(models.Model):
    review = models.ForeignKey(QCReview, on_delete=models.PROTECT, related_name="sample")
    batch_item = models.ForeignKey(BatchItem, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField()
    annotator_value = models.JSONField(null=True, help_text="The final label when the batch was handed in")
    qc_value = models.JSONField(null=True, blank=True)
    qc_note = models.TextField(blank=True)
    qc_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    qc_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["review_id", "position"]
        constraints = [models.UniqueConstraint(fields=["review", "batch_item"], name="qc_sample_item_once")]


class EventKind(models.TextChoices):
    CAMPAIGN_CREATED = "campaign_created", _("campaign created")
    SETTINGS_CHANGED = "settings_changed", _("settings changed")
    MEMBER_ADDED = "member_added", _("member added")
    MEMBER_ACTIVATED = "member_activated", _("member activated")
    MEMBER_DEACTIVATED = "member_deactivated", _("member deactivated")
    ACCOUNTS_CREATED = "accounts_created", _("accounts created")
    PASSWORD_RESET = "password_reset", _("password reset")
    INVITATION_SENT = "invitation_sent", _("invitation sent")
    INVITATION_ACCEPTED = "invitation_accepted", _("invitation accepted")
    INVITATION_DECLINED = "invitation_declined", _("invitation declined")
    INVITATION_WITHDRAWN = "invitation_withdrawn", _("invitation withdrawn")
    BATCH_CREATED = "batch_created", _("batch created")
    BATCH_STARTED = "batch_started", _("batch started")
    ITEM_SKIPPED = "item_skipped", _("item skipped")
    ITEM_FLAGGED = "item_flagged", _("item flagged")
    LABEL_CHANGED = "label_changed", _("label changed")
    LEASES_RECLAIMED = "leases_reclaimed", _("leases reclaimed")
    DISAGREEMENT_RESOLVED = "disagreement_resolved", _("disagreement resolved")
    HAND_IN_REQUESTED = "hand_in_requested", _("hand-in requested")
    HANDED_IN = "handed_in", _("handed in")
    REVIEW_STARTED = "review_started", _("review started")
    ACCEPTED = "accepted", _("accepted")
    REJECTED = "rejected", _("rejected")
    COMPLETED = "completed", _("completed")
    REOPENED = "reopened", _("reopened")
    GOLD_VERSION_CREATED = "gold_version_created", _("gold version created")
    GOLD_VERSION_FROZEN = "gold_version_frozen", _("gold version frozen")
    GOLD_VERSION_PINNED = "gold_version_pinned", _("gold version pinned")
    GOLD_VERSION_CHOSEN_FOR_BENCHMARK = "gold_version_chosen_for_benchmark", _("gold version chosen for benchmark")
    RATINGS_IMPORTED = "ratings_imported", _("ratings imported")


class Event(models.Model):
    """The audit trail: every batch transition and every decision, with who, when, why and the figures."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="events")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=40, choices=EventKind.choices)
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20, blank=True)
    round = models.PositiveSmallIntegerField(null=True, blank=True)
    actor = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField(blank=True)
    figures = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["batch", "id"], name="event_batch_order")]

    def __str__(self):
        return f"{self.kind} ({self.created_at:%Y-%m-%d %H:%M})"


class GoldMethod(models.TextChoices):
    SOURCE = "source", "published with the data"
    EXPERT_MAJORITY = "expert_majority"
    ANNOTATOR_MAJORITY = "annotator_majority"
    ADJUDICATED = "adjudicated"


class FrozenGoldError(ValidationError):
    pass


class GoldVersion(models.Model):
    """A citable set of gold labels for a benchmark. Frozen versions refuse every write."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="gold_versions")
    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="gold_versions")
    number = models.PositiveIntegerField()
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    frozen_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    left_out = models.JSONField(default=dict, blank=True,
                                help_text="Items the version has no label for: reason -> item ids (ties, unfinished)")

    class Meta:
        ordering = ["benchmark_id", "number"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "number"], name="gold_version_unique_number")]

    def __str__(self):
        return f"{self.benchmark.slug} gold v{self.number}"

    @property
    def citation(self):
        return f"{self.benchmark.slug}@gold-v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk and GoldVersion.objects.filter(pk=self.pk, frozen_at__isnull=False).exists():
            raise FrozenGoldError(f"{self} is frozen")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise FrozenGoldError("gold versions are never deleted")


class GoldLabel(models.Model):
    version = models.ForeignKey(GoldVersion, on_delete=models.PROTECT, related_name="labels")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="gold_labels")
    value = models.JSONField()
    method = models.CharField(max_length=20, choices=GoldMethod.choices)
    votes = models.JSONField(default=dict, blank=True, help_text="value -> count")
    margin = models.PositiveIntegerField(default=0, help_text="Top count minus runner-up")

    class Meta:
        ordering = ["version_id", "item_id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "item"], name="gold_label_once_per_version"),
            models.CheckConstraint(condition=Q(method__in=GoldMethod.values), name="gold_label_method_valid"),
        ]

    def __str__(self):
        return f"{self.version}: {self.item_id} = {self.value!r}"

    def _check_open(self):
        if GoldVersion.objects.filter(pk=self.version_id, frozen_at__isnull=False).exists():
            raise FrozenGoldError(f"gold version {self.version_id} is frozen; make a new version")

    def save(self, *args, **kwargs):
        self._check_open()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._check_open()
        return super().delete(*args, **kwargs)


class ItemFlag(models.Model):
    """An annotator's comment on an item for the trainers (a broken item, an unclear guideline)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.PROTECT, related_name="flags")
    batch_item = models.ForeignKey(BatchItem, on_delete=models.PROTECT, related_name="flags")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField()
    author = models.ForeignKey(User, on_delete=models.PROTECT, related_name="item_flags")
    comment = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["campaign", "id"], name="item_flag_campaign")]

    def __str__(self):
        return f"flag by {self.author} on {self.item_id}"
class BenchmarkGold(models.Model):
    """Which gold a benchmark-level report (no campaign) cites: the newest row wins; a null version means
    the source gold. Rows are never changed or deleted, so the history of choices is the audit trail.
    Choosing needs staff or the `annotation.choose_benchmark_gold` permission (actions.choose_benchmark_gold)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="gold_choices")
    version = models.ForeignKey(GoldVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    chosen_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    chosen_at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["benchmark_id", "id"]
        permissions = [("choose_benchmark_gold", "Can choose the gold version a benchmark's reports cite")]

    def __str__(self):
        return f"{self.benchmark.slug}: {self.version.citation if self.version else 'source gold'}"
