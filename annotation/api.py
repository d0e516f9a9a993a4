"""The annotation API: thin views over `actions` (writes) and `selectors` (reads).

Every refusal carries {"code", "detail"}. Querysets hide the campaigns a user is not a member of (404);
within a campaign the role decides (403).
"""
from contextlib import contextmanager

from django.db.models import Q
from django.http import Http404
from django.utils.translation import gettext as _
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from core.errors import ActionError, Code

from . import actions, policy, selectors
from .models import Annotation, Assignment, Batch, Campaign, Disagreement, GoldVersion, Membership, QCReview, Role
from .permissions import (
    CanCreateCampaign,
    CanReadBatches,
    CanReadBatchWork,
    CanReadDisagreements,
    CanReadGold,
    CanReadLabels,
    CanReadQC,
    CanReadVotes,
    CanResolve,
    IsManager,
    IsMember,
    IsOwner,
    IsQC,
    IsWorker,
    ReadOnly,
)
from .policy import READ_BATCHES, READ_DISAGREEMENTS
from .serializers import (
    AcceptSerializer,
    AmendSerializer,
    AnnotationSerializer,
    AssignmentSerializer,
    BatchItemSerializer,
    BatchSerializer,
    BenchmarkGoldSerializer,
    CampaignCreateSerializer,
    CampaignProgressSerializer,
    CampaignSerializer,
    DisagreementSerializer,
    ErrorSerializer,
    EventSerializer,
    FlagSerializer,
    GoldLabelSerializer,
    GoldVersionCreateSerializer,
    GoldVersionSerializer,
    GuidelineDisagreementsSerializer,
    ItemFlagSerializer,
    LabellerBatchSerializer,
    LastAnswerSerializer,
    LeaseSerializer,
    MembershipChangeSerializer,
    MembershipSerializer,
    NextSerializer,
    PinGoldSerializer,
    QCLabelSerializer,
    QCReviewSerializer,
    ReasonSerializer,
    ResolveSerializer,
    SettingsChangeSerializer,
    SettingsSerializer,
    SubmitResultSerializer,
    SubmitSerializer,
)

ERRORS = {code: ErrorSerializer for code in (400, 403, 404, 409)}
LEASE_VIEW = Assignment.objects.select_related(*selectors.LEASE_RELATIONS)
PROGRESS_PARAMETER = OpenApiParameter("progress", bool, default=True,
                                      description="false or 0: leave the labeller's progress out of the answer (it "
                                                  "costs more than the lease or the submission itself)")


def wants_progress(request):
    return request.query_params.get("progress", "").lower() not in ("0", "false", "no")


def read_body(serializer_class, request):
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def id_or_404(view, pk):
    """A detail route's id as an int; anything else is answered as get_object answers it (404)."""
    if isinstance(pk, str) and pk.isascii() and pk.isdigit():
        return int(pk)
    view.get_object()
    raise Http404


@contextmanager
def refused_as_get_object(view, *refusals):
    """For actions that read the object themselves: a refusal is first checked against get_object, whose 404
    (not yours to see) and 403 (the object permission) come before the action's own answer."""
    try:
        yield
    except refusals:
        view.get_object()
        raise


class CampaignScopedMixin:
    """Querysets cut to the user's campaigns. Refusals are answered by core.api.exception_handler."""

    def get_queryset(self):
        # The schema generator has no signed-in user; it only needs the model.
        if getattr(self, "swagger_fake_view", False):
            return self.queryset
        return self.visible()

    def scoped(self, queryset, *, list_roles=None, blind=False):
        """Lists show what the user's roles may read (`blind`: not what blind voters may not); a detail route
        finds any object of the user's campaigns, so that the role check answers 403 rather than 404."""
        user = self.request.user
        if blind and self.action == "list":
            ids = policy.campaigns_reading(user, list_roles)
            return queryset if ids is None else queryset.filter(campaign_id__in=ids)
        ids = policy.campaigns_with_role(user, list_roles if self.action == "list" else None)
        return queryset if ids is None else queryset.filter(campaign_id__in=ids)

    def page(self, queryset, serializer_class):
        rows = self.paginate_queryset(queryset)
        data = serializer_class(rows if rows is not None else queryset, many=True,
                                context=self.get_serializer_context()).data
        return self.get_paginated_response(data) if rows is not None else Response(data)


class CampaignFilter(filters.FilterSet):
    benchmark = filters.CharFilter(field_name="benchmark__slug")

    class Meta:
        model = Campaign
        fields = ["benchmark", "protocol"]


@extend_schema_view(list=extend_schema(description="Campaigns where you are a member (all of them for staff)."),
                    retrieve=extend_schema(responses={200: CampaignSerializer, 404: ErrorSerializer}))
class CampaignViewSet(CampaignScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = Campaign.objects.none()
    serializer_class = CampaignSerializer
    permission_classes = [IsMember]
    filterset_class = CampaignFilter

    def visible(self):
        campaigns = policy.visible_campaigns(self.request.user)
        return campaigns.prefetch_related("tasks") if self.action in ("list", "retrieve") else campaigns

    def get_permissions(self):
        return [CanCreateCampaign()] if self.action == "create" else super().get_permissions()

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if self.action == "list" and not getattr(self, "swagger_fake_view", False):
            context["roles"] = policy.roles_by_campaign(self.request.user)  # one query for the whole page
        return context

    @extend_schema(request=CampaignCreateSerializer, responses={201: CampaignSerializer, **ERRORS},
                   description="Staff (or holders of annotation.add_campaign) create campaigns; the creator becomes "
                               "manager.")
    def create(self, request):
        data = read_body(CampaignCreateSerializer, request)
        settings = {k: v for k, v in data.get("settings", {}).items() if k != "note"}
        campaign = actions.create_campaign(actor=request.user, name=data["name"], description=data["description"],
                                           benchmark=data["benchmark"], tasks=data.get("tasks"),
                                           protocol=data["protocol"], settings=settings,
                                           selection=data.get("selection"), worker_role=data.get("worker_role"))
        return Response(CampaignSerializer(campaign, context={"request": request}).data, status=status.HTTP_201_CREATED)

    @extend_schema(methods=["GET"], responses={200: SettingsSerializer(many=True), **ERRORS},
                   description="Every settings version, oldest first (members).")
    @extend_schema(methods=["POST"], request=SettingsChangeSerializer, responses={201: SettingsSerializer, **ERRORS},
                   description="Change settings (manager). A version a batch has started with is frozen: the change "
                               "makes a new version.")
    @action(detail=True, methods=["get", "post"], url_path="settings",
            permission_classes=[IsMember & ReadOnly | IsManager])
    def settings_versions(self, request, pk=None):
        campaign = self.get_object()
        if request.method == "GET":
            return self.page(campaign.settings_versions.order_by("version"), SettingsSerializer)
        changes = dict(read_body(SettingsChangeSerializer, request))
        note = changes.pop("note", "")
        version = actions.update_settings(campaign, actor=request.user, changes=changes, note=note)
        return Response(SettingsSerializer(version).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={201: BatchSerializer(many=True), **ERRORS},
                   description="Cut the items not yet in a batch into batches of batch_size (manager).")
    @action(detail=True, methods=["post"], permission_classes=[IsManager])
    def cut_batches(self, request, pk=None):
        batches = actions.cut_batches(self.get_object(), actor=request.user)
        return Response(BatchSerializer(batches, many=True).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, parameters=[PROGRESS_PARAMETER], responses={200: NextSerializer, **ERRORS},
                   description="Your next item: your live lease if you have one, else a new lease (annotators; "
                               "the experts of a gold panel). The item comes without gold and without anyone's labels.")
    @action(detail=True, methods=["post"], url_path="next", permission_classes=[IsAuthenticated])
    def next_item(self, request, pk=None):
        # The action checks the worker role itself, in the statement that locks the person's membership; the
        # campaign is looked up (404 for one you may not see) only when it refuses.
        with refused_as_get_object(self, ActionError):
            lease = actions.lease_next_item(id_or_404(self, pk), annotator=request.user)
        if lease is None:
            return Response({"status": "no_work", "detail": _("No item is waiting for you in this campaign."),
                             "assignment": None})
        return Response({"status": "resumed" if lease.resumed else "leased",
                         "detail": _("Your unfinished item.") if lease.resumed else _("A new item for you."),
                         "assignment": selectors.lease_view(lease.assignment, progress=wants_progress(request))})

    @extend_schema(responses={200: CampaignProgressSerializer, **ERRORS})
    @action(detail=True, methods=["get"], permission_classes=[CanReadBatches])
    def progress(self, request, pk=None):
        return Response(selectors.campaign_progress(self.get_object()))

    @extend_schema(responses={200: GuidelineDisagreementsSerializer(many=True), **ERRORS},
                   description="Disagreements grouped by the guideline version they happened under (trainers, "
                               "experts, managers, viewers).")
    @action(detail=True, methods=["get"], url_path="disagreements", permission_classes=[CanReadVotes],
            filter_backends=[])
    def disagreements_by_guideline(self, request, pk=None):
        campaign = self.get_object()
        rows = self.paginate_queryset(selectors.campaign_disagreements(campaign))  # paged by disagreement
        return self.get_paginated_response(selectors.disagreements_by_guideline(campaign, rows))

    @extend_schema(parameters=[OpenApiParameter("gold_version", int,
                                                description="Score against this gold version instead of source gold")],
                   responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   description="Human baseline per task, both ways: majority of k correct and the mean of the raters' "
                               "accuracies, plus the unweighted mean over tasks (managers, experts, viewers). A gold "
                               "version made from these raters' own labels is refused (400), as in the reports; "
                               "figures from fewer than min_items answered items carry the report's small_sample "
                               "flag.")
    @action(detail=True, methods=["get"], permission_classes=[CanReadGold])
    def baseline(self, request, pk=None):
        campaign = self.get_object()
        version = None
        wanted = request.query_params.get("gold_version")
        if wanted:
            if not (wanted.isascii() and wanted.isdigit()):
                raise ActionError(Code.INVALID_PARAMETER, "gold_version must be a gold version id (digits).")
            # Frozen versions of the benchmark, or this campaign's own drafts (another campaign's draft is
            # its managers' work in progress).
            versions = GoldVersion.objects.filter(Q(frozen_at__isnull=False) | Q(campaign=campaign),
                                                  benchmark_id=campaign.benchmark_id)
            version = versions.filter(pk=int(wanted)).first()
            if version is None:
                raise ActionError(Code.NOT_FOUND, "No such gold version for this benchmark.")
        return Response(selectors.baseline_scores(campaign, version))

    @extend_schema(request=GoldVersionCreateSerializer, responses={201: GoldVersionSerializer, **ERRORS},
                   description="A new draft gold version from this campaign's labels or from source gold (manager).")
    @action(detail=True, methods=["post"], url_path="gold_versions", permission_classes=[IsManager])
    def create_gold_version(self, request, pk=None):
        campaign = self.get_object()
        data = read_body(GoldVersionCreateSerializer, request)
        version = actions.create_gold_version(campaign, actor=request.user, method=data["method"], note=data["note"])
        return Response(GoldVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=PinGoldSerializer, responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   description="Choose the frozen gold version this campaign's reports cite, or null for the source "
                               "gold (manager; recorded as an event).")
    @action(detail=True, methods=["post"], url_path="pinned_gold", permission_classes=[IsManager])
    def pin_gold(self, request, pk=None):
        campaign = self.get_object()
        data = read_body(PinGoldSerializer, request)
        version = None
        if data["gold_version"] is not None:
            version = (GoldVersion.objects.filter(benchmark_id=campaign.benchmark_id, number=data["gold_version"])
                       .first())
            if version is None:
                raise ActionError(Code.NOT_FOUND, "No such gold version for this benchmark.")
        campaign = actions.pin_gold_version(campaign, version, actor=request.user, reason=data["reason"])
        return Response({"campaign": campaign.pk,
                         "pinned_gold": campaign.pinned_gold.citation if campaign.pinned_gold else "source"})


    @extend_schema(responses={200: ItemFlagSerializer(many=True), **ERRORS},
                   description="Items flagged by annotators with their comments, newest first (trainers, experts, "
                               "managers, viewers; a gold panel's voting experts see no names).")
    @action(detail=True, methods=["get"], permission_classes=[CanReadDisagreements], filter_backends=[])
    def flags(self, request, pk=None):
        campaign = self.get_object()
        rows = self.paginate_queryset(selectors.campaign_flags(campaign))
        return self.get_paginated_response(selectors.flag_views(rows,
                                                                blind=policy.access_for(request, campaign).votes_blind))

    @extend_schema(responses={200: LastAnswerSerializer, **ERRORS},
                   description="Your last answer in this campaign with its item, while it can still be changed "
                               "(its batch not handed in); annotation null otherwise (the campaign's workers).")
    @action(detail=True, methods=["get"], url_path="last_answer", permission_classes=[IsWorker])
    def last_answer(self, request, pk=None):
        annotation = selectors.last_answer(self.get_object(), request.user)
        if annotation is None:
            return Response({"annotation": None, "detail": _("You have no answer that can still be changed here.")})
        return Response(selectors.last_answer_view(annotation))


class OwnMembership(IsOwner):
    def has_object_permission(self, request, view, obj):
        return obj.user_id == request.user.pk


class MembershipViewSet(CampaignScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = Membership.objects.none()
    serializer_class = MembershipSerializer
    permission_classes = [IsManager]
    filterset_fields = ["campaign", "role", "active"]

    def visible(self):
        user = self.request.user
        members = Membership.objects.select_related("user", "campaign")
        managed = policy.campaigns_with_role(user, {"manager"} if self.action == "list" else None)
        return members if managed is None else members.filter(Q(campaign_id__in=managed) | Q(user=user))

    def get_permissions(self):
        # Everyone may read their own memberships; managers read and change their campaigns'.
        if self.action in ("list", "retrieve"):
            return [(IsManager | OwnMembership)()]
        return super().get_permissions()

    @extend_schema(request=MembershipSerializer, responses={201: MembershipSerializer, **ERRORS},
                   description="Add a member with a role (managers of that campaign).")
    def create(self, request):
        # The role is checked before the body, so that a caller who is not a manager of the campaign learns
        # nothing (which usernames exist) from the answer: the same 403 whatever the body names.
        named = str(request.data.get("campaign", "")) if isinstance(request.data, dict) else ""
        known = named.isascii() and named.isdigit() and len(named) < 10
        campaign = Campaign.objects.filter(pk=int(named)).first() if known else None
        actions.require_role(request.user, campaign, {Role.MANAGER}, "add members")
        data = read_body(MembershipSerializer, request)
        membership = actions.add_member(data["campaign"], actor=request.user, user=data["user"], role=data["role"])
        return Response(MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=MembershipChangeSerializer, responses={200: MembershipSerializer, **ERRORS},
                   description="Deactivate or reactivate a member (managers). Members are never deleted.")
    def partial_update(self, request, pk=None):
        membership = self.get_object()
        data = read_body(MembershipChangeSerializer, request)
        membership = actions.set_member_active(membership, actor=request.user, active=data["active"])
        return Response(MembershipSerializer(membership).data)


class BatchViewSet(CampaignScopedMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Batch.objects.none()
    serializer_class = BatchSerializer
    permission_classes = [CanReadBatches]
    filterset_fields = ["campaign", "state", "round"]

    def visible(self):
        return self.scoped(Batch.objects.select_related("settings", "campaign"), list_roles=READ_BATCHES)

    def batch_response(self, batch):
        return Response(BatchSerializer(Batch.objects.select_related("settings").get(pk=batch.pk)).data)

    @extend_schema(responses={200: EventSerializer(many=True), **ERRORS},
                   description="The batch's history, oldest first: every transition with actor, time, reason and "
                               "figures.")
    @action(detail=True, methods=["get"], permission_classes=[CanReadBatchWork], filter_backends=[])
    def events(self, request, pk=None):
        batch = self.get_object()
        events = batch.events.select_related("actor").order_by("id")
        hidden = policy.access_for(request, batch.campaign).qc_blind_batch(batch)
        if hidden is None:
            return self.page(events, EventSerializer)
        # A blind QC: no event about a hidden item's labels, and no labeller's name, until their own label.
        response = self.page(events.exclude(kind__in=policy.LABEL_EVENTS, figures__item__in=sorted(hidden["items"])),
                             EventSerializer)
        for row in response.data["results"] if isinstance(response.data, dict) else response.data:
            if row["actor"] in hidden["labellers"] and row["kind"] not in policy.LABEL_EVENTS:
                row["actor"] = None
        return response

    @extend_schema(responses={200: BatchItemSerializer(many=True), **ERRORS},
                   description="The batch's items with this round's outcome (paginated with limit/offset).")
    @action(detail=True, methods=["get"], permission_classes=[CanReadBatchWork], filter_backends=[])
    def items(self, request, pk=None):
        batch = self.get_object()
        response = self.page(batch.items.select_related("item").order_by("position"), BatchItemSerializer)
        hidden = policy.access_for(request, batch.campaign).qc_blind_batch(batch)
        if hidden is not None:
            # A blind QC: nothing of a hidden item's outcome (its final label, and what its status, method and
            # slots tell of its labels) until their own label.
            for row in response.data["results"] if isinstance(response.data, dict) else response.data:
                if row["id"] in hidden["batch_items"]:
                    row.update(status=None, final_value=None, final_method=None, needed=None, taken=None)
        return response

    @extend_schema(responses={200: QCReviewSerializer, **ERRORS},
                   description="The QC review of the current round with its sample (QC, managers, trainers, viewers).")
    @action(detail=True, methods=["get"], permission_classes=[CanReadQC])
    def qc_sample(self, request, pk=None):
        batch = self.get_object()
        review = (QCReview.objects.filter(batch=batch).order_by("-round")
                  .prefetch_related("sample__batch_item__item__task", "sample__qc_by").select_related("reviewer")
                  .first())
        if review is None:
            raise ActionError(Code.NOT_FOUND, _("This batch has not been handed in yet."))
        return Response(self.qc_view(batch, QCReviewSerializer(review).data))

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   description="The QC rule applied to the sample's labels given so far in the current round: the live "
                               "figures the review page shows, computed by the function that decides acceptance.")
    @action(detail=True, methods=["get"], permission_classes=[CanReadQC], filter_backends=[])
    def qc_figures(self, request, pk=None):
        batch = self.get_object()
        review = batch.reviews.order_by("-round").first()
        if review is None:
            raise ActionError(Code.NOT_FOUND, _("This batch has not been handed in yet."))
        decision, _labelled, size = selectors.qc_figures(review, batch.settings)
        return Response({"round": review.round, "sample": size, **decision.to_dict()})

    def qc_view(self, batch, data):
        """A blind review hides each final label from the QC until the QC has given theirs
        (CampaignAccess.qc_blind_batch)."""
        access = policy.access_for(self.request, batch.campaign)
        blind = access.reviews_blind(batch)
        hidden = access.qc_blind_batch(batch) if blind else None
        return selectors.blind_qc_sample(data, blind, hidden["batch_items"] if hidden else ())

    @extend_schema(request=None, responses={200: BatchSerializer, **ERRORS},
                   description="annotating -> handed_in when every item has a final label; draws the QC sample "
                               "(managers; the batch's annotators). A labeller's hand-in of a batch whose labels "
                               "are all in is taken even while an item waits for an expert's decision (it goes in "
                               "with the last decision) and answered alike either way: the state they are told and "
                               "their own progress. A manager is refused such a batch (409 not_complete).")
    @action(detail=True, methods=["post"], permission_classes=[IsManager | IsWorker])
    def hand_in(self, request, pk=None):
        batch = self.get_object()
        actions.hand_in_batch(batch, actor=request.user)
        if policy.access_for(request, batch.campaign).may_manage:
            return self.batch_response(batch)
        # A labeller's answer is the same whether the batch went on now or waits for the experts' decisions.
        return Response(LabellerBatchSerializer(Batch.objects.select_related("settings", "campaign").get(pk=batch.pk),
                                                context={"request": request}).data)

    @extend_schema(request=None, responses={200: BatchSerializer, **ERRORS}, description="handed_in -> in_review (QC).")
    @action(detail=True, methods=["post"], permission_classes=[IsQC])
    def start_review(self, request, pk=None):
        batch = self.get_object()
        actions.start_review(batch, actor=request.user)
        return self.batch_response(batch)

    @extend_schema(request=QCLabelSerializer, responses={200: QCReviewSerializer, **ERRORS},
                   description="The reviewing QC's label for one sampled item (404 not_in_sample for an item not in "
                               "the batch's current sample; 409 wrong_item when `round` is not the current one).")
    @action(detail=True, methods=["post"], permission_classes=[IsQC])
    def qc_label(self, request, pk=None):
        batch = self.get_object()
        data = read_body(QCLabelSerializer, request)
        entry = actions.record_qc_label(batch, actor=request.user, batch_item_id=data["batch_item"],
                                        value=data["value"], note=data["note"], round_=data.get("round"))
        return Response(self.qc_view(batch, QCReviewSerializer(entry.review).data))

    @extend_schema(request=AcceptSerializer, responses={200: BatchSerializer, **ERRORS},
                   description="in_review -> accepted. Below the thresholds: 409 below_threshold, unless an "
                               "override_reason is given (then flagged).")
    @action(detail=True, methods=["post"], permission_classes=[IsQC])
    def accept(self, request, pk=None):
        batch = self.get_object()
        data = read_body(AcceptSerializer, request)
        actions.accept_batch(batch, actor=request.user, reason=data["reason"], override_reason=data["override_reason"])
        return self.batch_response(batch)

    @extend_schema(request=ReasonSerializer, responses={200: BatchSerializer, **ERRORS},
                   description="in_review -> rejected -> annotating with round + 1 (while rounds are left); a reason "
                               "is required.")
    @action(detail=True, methods=["post"], permission_classes=[IsQC])
    def reject(self, request, pk=None):
        batch = self.get_object()
        actions.reject_batch(batch, actor=request.user, reason=read_body(ReasonSerializer, request)["reason"])
        return self.batch_response(batch)

    @extend_schema(request=ReasonSerializer, responses={200: BatchSerializer, **ERRORS},
                   description="rejected -> annotating after max_rounds stopped a batch and was raised (manager).")
    @action(detail=True, methods=["post"], permission_classes=[IsManager])
    def reopen(self, request, pk=None):
        batch = self.get_object()
        actions.reopen_batch(batch, actor=request.user, reason=read_body(ReasonSerializer, request)["reason"])
        return self.batch_response(batch)


class AssignmentViewSet(CampaignScopedMixin, viewsets.ReadOnlyModelViewSet):
    """Leases. Annotators see their own; managers see their campaigns'."""

    queryset = Assignment.objects.none()
    serializer_class = AssignmentSerializer
    permission_classes = [IsOwner | IsManager]
    filterset_fields = ["campaign", "status", "round"]

    def visible(self):
        user = self.request.user
        assignments = Assignment.objects.select_related("batch_item__batch")
        ids = policy.campaigns_with_role(user, {"manager"} if self.action == "list" else None)
        return assignments if ids is None else assignments.filter(Q(campaign_id__in=ids) | Q(annotator=user))

    @extend_schema(responses={200: LeaseSerializer, **ERRORS},
                   description="The leased item as the annotation page shows it (owner; managers).")
    def retrieve(self, request, pk=None):
        assignment = self.get_object()
        assignment = LEASE_VIEW.get(pk=assignment.pk)
        return Response(selectors.lease_view(assignment))

    @extend_schema(request=SubmitSerializer, parameters=[PROGRESS_PARAMETER],
                   responses={201: SubmitResultSerializer, 200: SubmitResultSerializer, **ERRORS},
                   description="Submit your answers. 409 too_early with seconds_left before the minimum reading time "
                               "(the lease stays); 400 invalid_answers with errors per question; a retry with the same "
                               "client_submission_id returns the first result (200, replayed); 409 wrong_item when "
                               "`item` is not the lease's item.")
    @action(detail=True, methods=["post"], permission_classes=[IsOwner])
    def submit(self, request, pk=None):
        # The action reads and locks the lease and refuses someone else's; the lease is looked up as get_object
        # does (404, or 403 for a lease of your campaign that is not yours) only on a refusal, so that those
        # come first as before.
        with refused_as_get_object(self, ActionError, APIException):
            data = read_body(SubmitSerializer, request)
            result = actions.submit_annotation(id_or_404(self, pk), annotator=request.user, answers=data["answers"],
                                               client_submission_id=data["client_submission_id"],
                                               item_id=data.get("item"))
        annotation = result.annotation  # its relations are loaded by the action (a replay loads them lazily)
        body = {"annotation": AnnotationSerializer(annotation).data, "replayed": result.replayed}
        if wants_progress(request):
            body["progress"] = selectors.labeller_progress(annotation.batch_item.batch_id, request.user,
                                                          annotation.campaign_id)
        return Response(body, status=status.HTTP_200_OK if result.replayed else status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: AssignmentSerializer, **ERRORS},
                   description="Give the item back unlabelled; it goes to someone else, never back to you (owner).")
    @action(detail=True, methods=["post"], permission_classes=[IsOwner])
    def release(self, request, pk=None):
        reason = request.data.get("reason", "") if isinstance(request.data, dict) else ""
        assignment = actions.release_assignment(self.get_object(), annotator=request.user, reason=str(reason or ""))
        return Response(AssignmentSerializer(assignment).data)

    @extend_schema(request=FlagSerializer, responses={201: ItemFlagSerializer, **ERRORS},
                   description="Flag the item of your lease with a comment for the trainers (owner).")
    @action(detail=True, methods=["post"], permission_classes=[IsOwner])
    def flag(self, request, pk=None):
        assignment = self.get_object()
        data = read_body(FlagSerializer, request)
        flag = actions.flag_item(assignment, actor=request.user, comment=data["comment"])
        return Response(ItemFlagSerializer(flag).data, status=status.HTTP_201_CREATED)


class AnnotationFilter(filters.FilterSet):
    batch = filters.NumberFilter(field_name="batch_item__batch_id")
    annotator = filters.CharFilter(field_name="annotator__username")
    superseded = filters.BooleanFilter(field_name="superseded_at", lookup_expr="isnull", exclude=True)

    class Meta:
        model = Annotation
        fields = ["campaign", "batch", "round", "annotator", "superseded", "item"]


class AnnotationViewSet(CampaignScopedMixin, viewsets.ReadOnlyModelViewSet):
    """Labels are written only by submitting; nobody edits them here. Annotators read only their own."""

    queryset = Annotation.objects.none()
    serializer_class = AnnotationSerializer
    permission_classes = [IsOwner | CanReadLabels]
    filterset_class = AnnotationFilter

    @extend_schema(request=AmendSerializer, responses={200: AnnotationSerializer, **ERRORS},
                   description="Change your last answer while its batch is not handed in (owner). 409 not_changeable "
                               "otherwise; 400 invalid_answers with errors per question; 409 wrong_item when `item` "
                               "is not the answer's item. The answer tells nothing of other people's labels: the "
                               "progress is your own, as after a submission; a change made once another label of "
                               "the item is in never closes its disagreement and is shown to the experts as such.")
    @action(detail=True, methods=["post"], permission_classes=[IsOwner])
    def amend(self, request, pk=None):
        annotation = self.get_object()
        data = read_body(AmendSerializer, request)
        annotation = actions.amend_annotation(annotation, annotator=request.user, answers=data["answers"],
                                              item_id=data.get("item"))
        # The labeller's own progress, as after a submission: no outcome (disagreement, agreement) that another
        # person's label decides.
        progress = selectors.labeller_progress(annotation.batch_item.batch_id, request.user, annotation.campaign_id)
        return Response({"annotation": AnnotationSerializer(annotation).data, "progress": progress})

    def visible(self):
        labels = Annotation.objects.select_related("annotator", "item", "settings").order_by("id")
        if self.action == "list":
            return labels.filter(pk__in=policy.labels_visible(self.request.user).values("pk"))
        return policy.labels_found(self.request.user, labels)


class DisagreementFilter(filters.FilterSet):
    guideline_version = filters.NumberFilter(field_name="settings__version")
    batch = filters.NumberFilter(field_name="batch_item__batch_id")

    class Meta:
        model = Disagreement
        fields = ["campaign", "status", "round", "guideline_version", "batch"]


class DisagreementViewSet(CampaignScopedMixin, viewsets.ReadOnlyModelViewSet):
    queryset = Disagreement.objects.none()
    serializer_class = DisagreementSerializer
    permission_classes = [CanReadDisagreements]
    filterset_class = DisagreementFilter

    def visible(self):
        rows = Disagreement.objects.select_related("batch_item__batch", "batch_item__item", "settings", "resolved_by",
                                                   "campaign")
        return self.scoped(rows, list_roles=READ_DISAGREEMENTS)

    @extend_schema(request=ResolveSerializer, responses={200: DisagreementSerializer, **ERRORS},
                   description="Decide the item's label (experts and trainers who did not label it).")
    @action(detail=True, methods=["post"], permission_classes=[CanResolve])
    def resolve(self, request, pk=None):
        disagreement = self.get_object()  # the role is checked before the body
        data = read_body(ResolveSerializer, request)
        disagreement = actions.resolve_disagreement(disagreement, actor=request.user, value=data["value"],
                                                    reason=data["reason"])
        return Response(DisagreementSerializer(disagreement, context=self.get_serializer_context()).data)

    @extend_schema(responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   description="Every label of the disagreement's round with the whole answer (reasons, comments) "
                               "and the item's flags; a gold panel's voting experts see no names.")
    @action(detail=True, methods=["get"], permission_classes=[CanReadDisagreements])
    def answers(self, request, pk=None):
        disagreement = self.get_object()
        blind = policy.access_for(request, disagreement.campaign).votes_blind
        return Response(selectors.disagreement_answers(disagreement, blind))


class GoldVersionViewSet(CampaignScopedMixin, viewsets.ReadOnlyModelViewSet):
    queryset = GoldVersion.objects.none()
    serializer_class = GoldVersionSerializer
    permission_classes = [CanReadGold]
    filterset_fields = ["campaign", "benchmark"]

    def visible(self):
        """A list shows the versions of the campaigns whose gold the user reads (policy.campaigns_with_readable_gold);
        a detail route finds those and any of the user's campaigns (403 rather than 404 for a role that may not)."""
        versions = GoldVersion.objects.select_related("benchmark", "campaign", "frozen_by")
        user = self.request.user
        readable = policy.campaigns_with_readable_gold(user, Campaign.objects.all())
        if self.action == "list":
            return versions.filter(campaign_id__in=readable)
        members = policy.campaigns_with_role(user)
        return versions if members is None else versions.filter(Q(campaign_id__in=readable)
                                                                | Q(campaign_id__in=members))

    @extend_schema(responses={200: GoldLabelSerializer(many=True), **ERRORS},
                   description="The version's labels with votes and margin (paginated with limit/offset).")
    @action(detail=True, methods=["get"], permission_classes=[CanReadGold], filter_backends=[])
    def labels(self, request, pk=None):
        return self.page(self.get_object().labels.select_related("item").order_by("item_id"), GoldLabelSerializer)

    @extend_schema(request=None, responses={200: GoldVersionSerializer, **ERRORS},
                   description="Freeze the version so reports can cite it; it refuses every write afterwards "
                               "(manager).")
    @action(detail=True, methods=["post"], permission_classes=[IsManager])
    def freeze(self, request, pk=None):
        return Response(GoldVersionSerializer(actions.freeze_gold_version(self.get_object(), actor=request.user)).data)

    @extend_schema(request=BenchmarkGoldSerializer, responses={200: OpenApiTypes.OBJECT, **ERRORS},
                   description="Make this frozen version the gold that benchmark-level reports cite (staff or the "
                               "annotation.choose_benchmark_gold permission).")
    @action(detail=True, methods=["post"], url_path="benchmark_gold", permission_classes=[CanReadGold])
    def benchmark_gold(self, request, pk=None):
        version = self.get_object()
        data = read_body(BenchmarkGoldSerializer, request)
        actions.choose_benchmark_gold(version.benchmark, version, actor=request.user, reason=data["reason"])
        return Response({"benchmark": version.benchmark.slug, "gold": version.citation})
