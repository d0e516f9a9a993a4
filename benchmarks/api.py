from django.db.models import ProtectedError
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from .actions import InUse, change_unused
from .models import Benchmark, Item, Task
from .permissions import IsStaffOrReadOnly, gold_benchmarks, readable
from .serializers import BenchmarkSerializer, ItemSerializer, TaskSerializer


class ProtectedDeleteMixin:
    """Items, tasks and benchmarks that labels, runs or gold refer to are kept (PROTECT): 409, not a crash."""

    def destroy(self, request, *args, **kwargs):
        try:
            return super().destroy(request, *args, **kwargs)
        except ProtectedError as error:
            kinds = sorted({str(type(obj)._meta.verbose_name_plural) for obj in error.protected_objects})
            return Response({"code": "in_use", "detail": f"Still referred to by {', '.join(kinds)}."},
                            status=status.HTTP_409_CONFLICT)


class ReadableMixin:
    """Staff and researchers read everything (not a researcher the benchmarks they label on); campaign members what
    their roles give them (benchmarks.permissions.readable); the rest is hidden (404)."""

    kind = None

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return self.queryset
        return readable(self.request.user, self.kind, super().get_queryset())


class UnusedUpdateMixin:
    """Items and tasks change through benchmarks.actions.change_unused, which refuses those in use (409)."""

    def update(self, request, *args, **kwargs):
        try:
            return super().update(request, *args, **kwargs)
        except InUse as error:
            return Response({"code": error.code, "detail": str(error)}, status=status.HTTP_409_CONFLICT)

    def perform_update(self, serializer):
        serializer.instance = change_unused(serializer.instance, actor=self.request.user,
                                            changes=serializer.validated_data)


@extend_schema(description="Benchmarks: all for staff and researchers; campaign members read the benchmarks of "
                           "their campaigns.")
class BenchmarkViewSet(ReadableMixin, ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Benchmark.objects.all()
    serializer_class = BenchmarkSerializer
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    lookup_field = "slug"
    filterset_fields = ["language"]
    kind = "benchmark"


@extend_schema(description="Tasks: all for staff and researchers; campaign members read their campaigns' tasks. "
                           "A task whose items are in use is not changed (409 in_use).")
class TaskViewSet(ReadableMixin, UnusedUpdateMixin, ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Task.objects.select_related("benchmark")
    serializer_class = TaskSerializer
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    filterset_fields = {"benchmark__slug": ["exact"], "dimension": ["exact"]}
    kind = "task"


class ItemFilter(filters.FilterSet):
    benchmark = filters.CharFilter(field_name="task__benchmark__slug")
    task = filters.NumberFilter(field_name="task_id")

    class Meta:
        model = Item
        fields = ["benchmark", "task", "external_id"]


@extend_schema(description="Items: all for staff and researchers (not a researcher's on a benchmark they label on, "
                           "but as their roles give); managers, trainers, experts and viewers read "
                           "their campaigns' items; annotators and QC see items only through their leases and "
                           "samples. `meta`, `source_gold` and `content_hash` are present only where the reader may "
                           "read the benchmark's gold. An item in use (labels, gold, predictions, batches) is not "
                           "changed (409 in_use).")
class ItemViewSet(ReadableMixin, UnusedUpdateMixin, ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Item.objects.select_related("task").order_by("task_id", "external_id")
    serializer_class = ItemSerializer
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    filterset_class = ItemFilter
    kind = "item"

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context["gold_benchmarks"] = gold_benchmarks(self.request.user)
        return context
