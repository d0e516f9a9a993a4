"""The benchmark's side of a report: its tasks, their items and the gold of the frozen version."""
from __future__ import annotations

from django.db.models.fields.json import KT

from annotation.models import GoldLabel
from benchmarks.models import Item, Task

from .expressions import OptionCount


def task_rows(scope):
    tasks = Task.objects.filter(benchmark=scope.benchmark)
    if scope.campaign is not None:
        tasks = tasks.filter(campaigns=scope.campaign)
    return list(tasks.order_by("slug").values("id", "slug", "name", "dimension", "form"))


def item_queryset(scope, task_ids):
    items = Item.objects.filter(task_id__in=task_ids)
    if scope.campaign is not None:
        items = items.filter(batch_items__campaign=scope.campaign)
    return items.order_by()


def item_rows(scope, task_ids):
    fields = ["id", "task_id", "external_id", "content_hash", "domain", "n_options", "model_a", "model_b"]
    if scope.gold_version is None:
        fields.append("source_gold")
    return (item_queryset(scope, task_ids)
            .annotate(domain=KT("meta__domain"), n_options=OptionCount("fields"), model_a=KT("meta__model_a"),
                      model_b=KT("meta__model_b"))
            .values_list(*fields))


def gold_rows(scope, task_ids):
    """(item id, gold value) of the primary question from the frozen version; without one the
    source gold travels with the items."""
    return (GoldLabel.objects.filter(version=scope.gold_version, item__in=item_queryset(scope, task_ids).values("id"))
            .order_by().values_list("item_id", "value"))
