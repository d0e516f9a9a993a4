from django.contrib import admin

from .models import Benchmark, Item, Task


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "language", "version", "licence", "created_at")
    search_fields = ("slug", "name")


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("slug", "benchmark", "name", "dimension")
    list_filter = ("benchmark", "dimension")
    search_fields = ("slug", "name")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "task", "content_hash", "created_at")
    list_filter = ("task__benchmark", "task")
    search_fields = ("external_id",)
    readonly_fields = ("content_hash", "created_at")
    list_select_related = ("task",)
