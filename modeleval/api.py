from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from benchmarks.models import Benchmark

from . import actions, arena, selectors, selfchat_runs
from .models import EvalRun, ModelSpec, Prediction
from .permissions import IsResearcherOrStaff, IsStaffToWrite, with_readable_results
from .serializers import (
    EvalRunSerializer,
    MakePairsSerializer,
    ModelSpecSerializer,
    PairsBuiltSerializer,
    PredictionSerializer,
    RunChunkSerializer,
    RunEventSerializer,
    RunModeSerializer,
    StartRunSerializer,
    StartSelfChatSerializer,
    StartTrainingSerializer,
)


class ModelSpecViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
                       viewsets.GenericViewSet):
    """Registered models; staff register new ones (the files' sha256 is taken at registration)."""

    queryset = ModelSpec.objects.all()
    serializer_class = ModelSpecSerializer
    permission_classes = [IsAuthenticated & IsResearcherOrStaff & IsStaffToWrite]
    lookup_field = "name"

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        if data.get("backend") == "api":
            serializer.instance = actions.register_api_model(
                data["name"], data.get("endpoint", ""), data.get("api_model", ""),
                api_key_env=data.get("api_key_env", ""), concurrency=data.get("concurrency", 4),
                user=self.request.user, revision=data.get("revision", ""))
            return
        serializer.instance = actions.register_model(data.pop("name"), data.pop("source", ModelSpec.PACKAGED),
                                                     user=self.request.user, **data)


class RunFilter(filters.FilterSet):
    model = filters.CharFilter(field_name="model__name")
    benchmark = filters.CharFilter(field_name="benchmark__slug")

    class Meta:
        model = EvalRun
        fields = ["model", "benchmark", "mode", "state"]


class EvalRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Model runs with their progress. Starting one queues its chunks on the `gpu` queue."""

    queryset = selectors.runs()
    serializer_class = EvalRunSerializer
    permission_classes = [IsAuthenticated & IsResearcherOrStaff]
    filterset_class = RunFilter

    def get_queryset(self):
        return with_readable_results(self.request.user, super().get_queryset())

    @extend_schema(request=StartRunSerializer, responses={
        201: EvalRunSerializer,
        503: OpenApiResponse(description="broker_unavailable: the task queue is unreachable; the run was failed, "
                                         "start it again after Retry-After seconds")})
    def create(self, request):
        form = StartRunSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        run = actions.start_run(**{**data, "prompt_template": data["prompt_template"] or None,
                                   "prompt_version": data["prompt_version"] or None}, user=request.user)
        return Response(EvalRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=StartTrainingSerializer, responses={201: EvalRunSerializer}, description=(
        "Train a classifier on the benchmark's accepted final labels (DiQAD's supervised baseline); "
        "the trained model then scores the test split in a `classify` run."))
    @action(detail=False, methods=["post"], filterset_class=None)
    def train(self, request):
        form = StartTrainingSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        run = actions.start_training(question_key=data.pop("question"), **data, user=request.user)
        return Response(EvalRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=StartSelfChatSerializer, responses={201: EvalRunSerializer}, description=(
        "Start a self-chat run (BotChat): the model continues the seeds of a MuTual import. The run is queued at "
        "once; a worker on the `gpu` queue generates the dialogues into the run's own benchmark."))
    @action(detail=False, methods=["post"], filterset_class=None)
    def selfchat(self, request):
        form = StartSelfChatSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        run = selfchat_runs.start_selfchat(model=data.pop("model"), seeds_benchmark=data.pop("seeds"),
                                           similarity=data.pop("loop_similarity"),
                                           threshold=data.pop("loop_threshold"), **data, user=request.user)
        return Response(EvalRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=MakePairsSerializer, responses={201: PairsBuiltSerializer}, description=(
        "Build a benchmark of arena pairs (BotChat) from finished self-chat runs, and the real dialogues of a "
        "MuTual import as 'human'. One transaction: a refusal writes nothing."))
    @action(detail=False, methods=["post"], filterset_class=None)
    def pairs(self, request):
        form = MakePairsSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        benchmark = arena.make_pairs(
            runs=data["runs"], reference=data["reference"] or None, ground_truth=data["ground_truth"] or None,
            seed=data["seed"], both_orders=data["both_orders"], benchmark_slug=data["benchmark_slug"] or None,
            min_source_utterances=data["min_source_utterances"], user=request.user)
        built = {"benchmark": benchmark.slug, "name": benchmark.name, "description": benchmark.description,
                 "items": benchmark.tasks.get().items.count()}
        return Response(PairsBuiltSerializer(built).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[OpenApiParameter("benchmark", str, required=True, description="Benchmark slug")],
                   responses={200: RunModeSerializer(many=True)},
                   description="Every run mode, whether it can score all the benchmark's tasks, and why not.")
    @action(detail=False, pagination_class=None, filterset_class=None)
    def modes(self, request):
        slug = request.query_params.get("benchmark", "")
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise NotFound(f"no benchmark {slug!r}")
        return Response(RunModeSerializer(selectors.run_modes(benchmark), many=True).data)

    @extend_schema(request=None, responses={200: EvalRunSerializer, 409: OpenApiResponse(description="not active")})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = actions.cancel_run(self.get_object(), user=request.user, reason=request.data.get("reason", ""))
        return Response(EvalRunSerializer(run).data)

    def listed(self, rows, serializer_class):
        """A list that grows with the run, paged as every list is (?limit=&offset=)."""
        return self.get_paginated_response(serializer_class(self.paginate_queryset(rows), many=True).data)

    @extend_schema(responses=RunChunkSerializer(many=True))
    @action(detail=True, filterset_class=None)
    def chunks(self, request, pk=None):
        return self.listed(self.get_object().chunks.order_by("index"), RunChunkSerializer)

    @extend_schema(responses=RunEventSerializer(many=True))
    @action(detail=True, filterset_class=None)
    def events(self, request, pk=None):
        return self.listed(self.get_object().events.select_related("chunk", "actor").order_by("id"),
                           RunEventSerializer)

    @extend_schema(responses=inline_serializer("RunSummary", {
        "run": serializers.IntegerField(), "state": serializers.CharField(), "mode": serializers.CharField(),
        "tasks": serializers.DictField(), "overall_accuracy": serializers.FloatField(allow_null=True)}))
    @action(detail=True, filterset_class=None)
    def summary(self, request, pk=None):
        return Response(selectors.run_summary(self.get_object()))


class PredictionFilter(filters.FilterSet):
    task = filters.CharFilter(field_name="item__task__slug")
    external_id = filters.CharFilter(field_name="item__external_id")

    class Meta:
        model = Prediction
        fields = ["run", "task", "external_id", "variant", "parse_status", "correct"]


@extend_schema(description="Predictions, filtered by run (`?run=ID`), paginated. They show whether the model "
                           "matched the gold answer: staff and researchers only (not a researcher the runs of a "
                           "benchmark they label on).")
class PredictionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = selectors.predictions().order_by("run_id", "item__task__slug", "item__external_id", "variant")
    serializer_class = PredictionSerializer
    permission_classes = [IsAuthenticated & IsResearcherOrStaff]
    filterset_class = PredictionFilter

    def get_queryset(self):
        return with_readable_results(self.request.user, super().get_queryset(), "run__benchmark")
