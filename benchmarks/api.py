from django.db.models import ProtectedError
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from .models import Benchmark, Item, Task
from .permissions import IsStaffOrReadOnly, can_see_gold
from .serializers import BenchmarkSerializer, ItemSerializer, ItemWithoutGoldSerializer, TaskSerializer


class ProtectedDeleteMixin:
    """Items, tasks and benchmarks that labels, runs or gold refer to are kept (PROTECT): 409, not a crash."""

    def destroy(self, request, *args, **kwargs):
        try:
            return super().destroy(request, *args, **kwargs)
        except ProtectedError as error:
            kinds = sorted({str(type(obj)._meta.verbose_name_plural) for obj in error.protected_objects})
            return Response({"code": "in_use", "detail": f"Still referred to by {', '.join(kinds)}."},
                            status=status.HTTP_409_CONFLICT)


class BenchmarkViewSet(ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Benchmark.objects.all()
    serializer_class = BenchmarkSerializer
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    lookup_field = "slug"
    filterset_fields = ["language"]


class TaskViewSet(ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Task.objects.select_related("benchmark")
    serializer_class = TaskSerializer
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    filterset_fields = {"benchmark__slug": ["exact"], "dimension": ["exact"]}


class ItemFilter(filters.FilterSet):
    benchmark = filters.CharFilter(field_name="task__benchmark__slug")
    task = filters.NumberFilter(field_name="task_id")

    class Meta:
        model = Item
        fields = ["benchmark", "task", "external_id"]


@extend_schema(description="Items; `source_gold` is present only for staff and researchers.")
class ItemViewSet(ProtectedDeleteMixin, viewsets.ModelViewSet):
    queryset = Item.objects.select_related("task").order_by("task_id", "external_id")
    permission_classes = [IsAuthenticated & IsStaffOrReadOnly]
    filterset_class = ItemFilter

    def get_serializer_class(self):
        request = getattr(self, "request", None)
        if request is not None and can_see_gold(request.user):
            return ItemSerializer
        return ItemWithoutGoldSerializer
