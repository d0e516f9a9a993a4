from django.contrib import admin

from .models import Benchmark, Item, Task


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "language", "version", "licence", "created_at")
    search_fields = ("slug", "name")


class InUseReadOnly:
    """A task or item that labels, gold, predictions or campaigns refer to is shown, not changed."""

    def get_readonly_fields(self, request, obj=None):
        fixed = super().get_readonly_fields(request, obj)
        if obj is not None and obj.used_by():
            return [f.name for f in obj._meta.concrete_fields if f.name != "id"]
        return fixed


@admin.register(Task)
class TaskAdmin(InUseReadOnly, admin.ModelAdmin):
    list_display = ("slug", "benchmark", "name", "dimension")
    list_filter = ("benchmark", "dimension")
    search_fields = ("slug", "name")


@admin.register(Item)
class ItemAdmin(InUseReadOnly, admin.ModelAdmin):
    list_display = ("external_id", "task", "content_hash", "created_at")
    list_filter = ("task__benchmark", "task")
    search_fields = ("external_id",)
    readonly_fields = ("content_hash", "created_at")
    list_select_related = ("task",)
