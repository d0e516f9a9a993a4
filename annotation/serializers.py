"""Shapes of the annotation API. Read serializers never carry gold or other people's labels unless the
view that uses them is restricted to roles that may see them."""
from django.contrib.auth import get_user_model
from django.utils import translation
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from benchmarks.formschema import localized
from benchmarks.models import Benchmark

from . import policy, selectors
from .actions import SYSTEM_REASONS
from .models import (
    WORKER_ROLES,
    Annotation,
    Assignment,
    Batch,
    BatchItem,
    BatchState,
    Campaign,
    CampaignSettings,
    Disagreement,
    Event,
    GoldLabel,
    GoldVersion,
    ItemFlag,
    Membership,
    Protocol,
    QCReview,
    QCSampleItem,
    Role,
)


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Machine-readable, e.g. too_early, not_complete, below_threshold")
    detail = serializers.CharField(help_text="For people")


class SettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = CampaignSettings
        fields = ["version", *CampaignSettings.EDITABLE, "note", "created_at"]
        read_only_fields = fields


class SettingsChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = CampaignSettings
        fields = [*CampaignSettings.EDITABLE, "note"]
        extra_kwargs = {name: {"required": False} for name in fields}


class CampaignSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    tasks = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    settings = SettingsSerializer(read_only=True)
    my_roles = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = ["id", "name", "description", "benchmark", "tasks", "protocol", "worker_role", "selection", "source",
                  "settings", "my_roles", "created_at"]
        read_only_fields = fields

    def get_my_roles(self, campaign) -> list[str]:
        request = self.context.get("request")
        if request is None:
            return []
        if "roles" in self.context:
            return sorted(policy.access_of(request.user, campaign, self.context["roles"].get(campaign.pk, ())).roles)
        return sorted(policy.access_for(request, campaign).roles)


class CampaignCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    tasks = serializers.ListField(child=serializers.SlugField(), required=False,
                                  help_text="Task slugs of the benchmark; all of them when absent")
    protocol = serializers.ChoiceField(choices=Protocol.choices)
    worker_role = serializers.ChoiceField(choices=[(role.value, role.label) for role in WORKER_ROLES], required=False,
                                          help_text="Who labels the items; the protocol's by default (experts in a "
                                                    "gold panel, annotators elsewhere)")
    settings = SettingsChangeSerializer(required=False)
    selection = serializers.JSONField(required=False, help_text='{} or {"external_ids": [...]}')


class MembershipSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", queryset=get_user_model().objects.all())
    campaign = serializers.PrimaryKeyRelatedField(queryset=Campaign.objects.all())
    role = serializers.ChoiceField(choices=Role.choices)

    class Meta:
        model = Membership
        fields = ["id", "campaign", "user", "role", "active", "created_at"]
        read_only_fields = ["active", "created_at"]
        validators = []  # the action answers a duplicate (409) or reactivates a former member


class MembershipChangeSerializer(serializers.Serializer):
    active = serializers.BooleanField()


class ProgressSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    batch_id = serializers.IntegerField(help_text="The batch's id, for /batches/ID/ routes")
    round = serializers.IntegerField()
    state = serializers.CharField()
    done = serializers.IntegerField(help_text="Items with a final label or excluded")
    total = serializers.IntegerField()
    pending = serializers.IntegerField()
    disagreements = serializers.IntegerField()
    excluded = serializers.IntegerField()
    mine = serializers.IntegerField(required=False, help_text="Your labels in this batch round")
    left_for_you = serializers.IntegerField(required=False, help_text="Items of the campaign still waiting for you")


class WorkerProgressSerializer(ProgressSerializer):
    """A batch's progress as its labellers see it: nothing that other people's answers change."""
    done = serializers.IntegerField(help_text="Items with all their labels of this round (agreeing or not)")
    pending = disagreements = excluded = None  # outcomes: for the batch's readers only
    left = serializers.IntegerField(help_text="total - done")
    mine = serializers.IntegerField(help_text="Items you labelled in this round")
    state = serializers.CharField(help_text="The batch's state; \"complete\" once its labels of this round are all "
                                            "in and nobody has decided on it yet (handed in or not, agreeing or not)")
    ready_to_hand_in = serializers.BooleanField(help_text="Every label is in and the batch is handed in by hand: the "
                                                          "page offers to hand it in")


class CampaignProgressSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    by_state = serializers.DictField(child=serializers.IntegerField())
    batches = ProgressSerializer(many=True)


class LeaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    campaign = serializers.IntegerField()
    batch_id = serializers.IntegerField(help_text="The batch the item is leased from (its progress's batch_id)")
    round = serializers.IntegerField()
    served_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    seconds_until_submit_allowed = serializers.FloatField()
    item = serializers.JSONField(help_text="{id, external_id, dialogue, fields, meta}; never gold")
    task = serializers.JSONField(help_text="{id, slug, name, instructions}")
    form = serializers.JSONField(help_text="The task's answer form")
    guidelines = serializers.JSONField(help_text="{version, language, markdown, html}: in the person's language "
                                                 "where the campaign gives it (language), else the default "
                                                 "(language null)")
    progress = WorkerProgressSerializer(required=False, help_text="Left out when asked with progress=0")


class NextSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["leased", "resumed", "no_work"])
    detail = serializers.CharField()
    assignment = LeaseSerializer(allow_null=True)


class AssignmentSerializer(serializers.ModelSerializer):
    batch = serializers.IntegerField(source="batch_item.batch.number", read_only=True)

    class Meta:
        model = Assignment
        fields = ["id", "campaign", "batch", "item", "round", "slot", "status", "served_at", "expires_at", "closed_at"]
        read_only_fields = fields


ITEM_SENT_FOR = "The id of the item the answers were given on: refused (409 wrong_item) when it is not this one's item"


class SubmitSerializer(serializers.Serializer):
    client_submission_id = serializers.UUIDField(help_text="Made by the client once per submission; a retry reuses it")
    answers = serializers.DictField(help_text="Question key -> answer, as the task's form asks")
    item = serializers.IntegerField(required=False, help_text=ITEM_SENT_FOR)


_DATETIME = serializers.DateTimeField()


class AnnotationSerializer(serializers.ModelSerializer):
    annotator = serializers.SlugRelatedField(slug_field="username", read_only=True)
    external_id = serializers.CharField(source="item.external_id", read_only=True)
    guideline_version = serializers.IntegerField(source="settings.version", read_only=True, allow_null=True)

    class Meta:
        model = Annotation
        fields = ["id", "campaign", "item", "external_id", "annotator", "round", "slot", "answers", "value", "excluded",
                  "excluded_by", "dwell_seconds", "client_submission_id", "guideline_version", "submitted_at",
                  "superseded_at"]
        read_only_fields = fields

    def to_representation(self, instance):
        # What the fields above give (the schema reads them; tests/annotation/test_serializers.py holds the two
        # equal), written out: a ModelSerializer builds its fields again for every instance, a tenth of the
        # web server's CPU in each submit.
        settings = instance.settings
        uuid = instance.client_submission_id
        return {"id": instance.pk, "campaign": instance.campaign_id, "item": instance.item_id,
                "external_id": instance.item.external_id, "annotator": instance.annotator.username,
                "round": instance.round, "slot": instance.slot, "answers": instance.answers, "value": instance.value,
                "excluded": instance.excluded, "excluded_by": instance.excluded_by,
                "dwell_seconds": instance.dwell_seconds, "client_submission_id": None if uuid is None else str(uuid),
                "guideline_version": None if settings is None else settings.version,
                "submitted_at": _DATETIME.to_representation(instance.submitted_at),
                "superseded_at": _DATETIME.to_representation(instance.superseded_at)}


class SubmitResultSerializer(serializers.Serializer):
    annotation = AnnotationSerializer()
    replayed = serializers.BooleanField(help_text="True when this answers a retry of an earlier submission")
    progress = WorkerProgressSerializer(required=False, help_text="Left out when asked with progress=0")


class BatchSerializer(serializers.ModelSerializer):
    settings_version = serializers.IntegerField(source="settings.version", read_only=True, allow_null=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Batch
        fields = ["id", "campaign", "number", "state", "state_text", "round", "settings_version",
                  "accepted_below_threshold", "progress", "created_at", "updated_at"]
        read_only_fields = fields

    state_text = serializers.CharField(source="get_state_display", read_only=True,
                                       help_text="The state in the reader's language.")

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, batch):
        return selectors.batch_progress(batch)


class LabellerBatchSerializer(BatchSerializer):
    """A batch as a labeller is answered after handing it in: the state they are told (labeller_handed_in_state)
    and their own progress (worker_progress), whether the batch went on now or waits for the experts' decisions.
    Nothing in it depends on whether anyone's labels agreed."""

    state = serializers.SerializerMethodField()
    state_text = serializers.SerializerMethodField()
    accepted_below_threshold = serializers.SerializerMethodField()

    def get_state(self, batch):
        return selectors.labeller_handed_in_state(batch.campaign.has_qc)

    def get_state_text(self, batch):
        return state_text(self.get_state(batch))

    def get_accepted_below_threshold(self, batch):
        return False

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, batch):
        return selectors.worker_progress(batch, self.context["request"].user)


class BatchItemSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="item.external_id", read_only=True)

    class Meta:
        model = BatchItem
        fields = ["id", "item", "external_id", "position", "status", "final_value", "final_method", "needed", "taken"]
        read_only_fields = fields


def state_text(state):
    """A batch state in the reader's language ("" stays "")."""
    return str(BatchState(state).label) if state in BatchState.values else state


class EventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Event
        fields = ["id", "kind", "kind_text", "from_state", "from_state_text", "to_state", "to_state_text", "round",
                  "actor", "reason", "reason_text", "figures", "created_at"]
        read_only_fields = fields

    kind_text = serializers.CharField(source="get_kind_display", read_only=True,
                                      help_text="The event's name in the reader's language.")
    from_state_text = serializers.SerializerMethodField()
    to_state_text = serializers.SerializerMethodField()
    reason_text = serializers.SerializerMethodField(
        help_text="The reason in the reader's language where the platform wrote it (a person's own text as given).")

    def get_from_state_text(self, event) -> str:
        return state_text(event.from_state)

    def get_to_state_text(self, event) -> str:
        return state_text(event.to_state)

    def get_reason_text(self, event) -> str:
        return translation.gettext(event.reason) if event.reason in SYSTEM_REASONS else event.reason


class QCSampleItemSerializer(serializers.ModelSerializer):
    item = serializers.SerializerMethodField()
    qc_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = QCSampleItem
        fields = ["batch_item", "position", "item", "annotator_value", "qc_value", "qc_note", "qc_by", "qc_at"]
        read_only_fields = fields

    def get_item(self, entry) -> dict:
        item = entry.batch_item.item
        return {**selectors.item_view(item), "form": localized(item.task.form, translation.get_language())}


class QCReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True)
    sample = QCSampleItemSerializer(many=True, read_only=True)

    class Meta:
        model = QCReview
        fields = ["id", "batch", "round", "reviewer", "decision", "reason", "override", "figures", "sample",
                  "created_at", "started_at", "decided_at"]
        read_only_fields = fields


class QCLabelSerializer(serializers.Serializer):
    batch_item = serializers.IntegerField()
    value = serializers.JSONField(help_text="The QC's answer to the primary question")
    note = serializers.CharField(required=False, allow_blank=True, default="")
    round = serializers.IntegerField(required=False, help_text="The round of the sample the label was given on; "
                                                               "refused (409 wrong_item) once the batch is in another")


class AcceptSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    override_reason = serializers.CharField(required=False, allow_blank=True, default="",
                                            help_text="Required to accept a sample below the thresholds (flagged)")


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(allow_blank=True)


class DisagreementSerializer(serializers.ModelSerializer):
    batch = serializers.IntegerField(source="batch_item.batch.number", read_only=True)
    item = serializers.IntegerField(source="batch_item.item_id", read_only=True)
    external_id = serializers.CharField(source="batch_item.item.external_id", read_only=True)
    guideline_version = serializers.IntegerField(source="settings.version", read_only=True)
    resolved_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Disagreement
        fields = ["id", "campaign", "batch", "item", "external_id", "round", "guideline_version", "labels", "status",
                  "method", "resolved_value", "resolved_by", "reason", "created_at", "resolved_at",
                  "amended_after_peer"]
        read_only_fields = fields

    amended_after_peer = serializers.SerializerMethodField(
        help_text="A label was changed once another label of the item was in (the labels say whose, and its first "
                  "value): the change did not close the disagreement.")

    def get_amended_after_peer(self, disagreement) -> bool:
        return any(label.get("amended_after_peer") for label in disagreement.labels or [])

    def to_representation(self, disagreement):
        """Who answered what (and who decided) only for readers of the campaign's labels: a gold panel's
        voting experts decide ties blind."""
        data = super().to_representation(disagreement)
        request = self.context.get("request")
        if not (request and policy.access_for(request, disagreement.campaign).reads_labels):
            data["labels"], data["resolved_by"] = [], None
        return data


class GuidelineDisagreementsSerializer(serializers.Serializer):
    guideline_version = serializers.IntegerField()
    note = serializers.CharField()
    total = serializers.IntegerField()
    open = serializers.IntegerField()
    by_method = serializers.DictField(child=serializers.IntegerField())
    disagreements = serializers.ListField(child=serializers.DictField())


class ResolveSerializer(serializers.Serializer):
    value = serializers.JSONField(help_text="The decided answer to the primary question")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class GoldVersionSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    frozen_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    labels = serializers.IntegerField(source="labels.count", read_only=True)
    citation = serializers.CharField(read_only=True, help_text="How reports cite this version")

    class Meta:
        model = GoldVersion
        fields = ["id", "benchmark", "campaign", "number", "citation", "note", "labels", "created_at", "frozen_at",
                  "frozen_by", "left_out"]
        read_only_fields = fields


class GoldVersionCreateSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=["campaign", "source"], default="campaign")
    note = serializers.CharField(required=False, allow_blank=True, default="")


class GoldLabelSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="item.external_id", read_only=True)

    class Meta:
        model = GoldLabel
        fields = ["item", "external_id", "value", "method", "votes", "margin"]
        read_only_fields = fields


class FlagSerializer(serializers.Serializer):
    comment = serializers.CharField(help_text="What is wrong with the item, for the trainers")


class ItemFlagSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)
    external_id = serializers.CharField(source="item.external_id", read_only=True)

    class Meta:
        model = ItemFlag
        fields = ["id", "campaign", "item", "external_id", "round", "author", "comment", "created_at"]
        read_only_fields = fields


class AmendSerializer(serializers.Serializer):
    answers = serializers.DictField(help_text="The new answers, question key -> answer, as the task's form asks")
    item = serializers.IntegerField(required=False, help_text=ITEM_SENT_FOR)


class LastAnswerSerializer(serializers.Serializer):
    annotation = serializers.JSONField(help_text="{id, answers, round, submitted_at}")
    item = serializers.JSONField(help_text="{id, external_id, dialogue, fields, meta}; never gold")
    task = serializers.JSONField()
    form = serializers.JSONField()
class PinGoldSerializer(serializers.Serializer):
    gold_version = serializers.IntegerField(allow_null=True, min_value=1,
                                            help_text="Version number (as in db@gold-vN); null: the source gold")
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class BenchmarkGoldSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")
