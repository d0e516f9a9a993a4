from typing import Protocol, TypedDict

from django.db.models import Q
from rest_framework import permissions

from core.slots import Slot

RESEARCHER_GROUP = "researchers"


class MemberRules(TypedDict):
    benchmark: Q  # over Benchmark: the benchmarks they read
    task: Q  # over Task: the tasks they read
    item: Q  # over Item: the items they read
    gold: Q  # over Benchmark: those whose source gold and item meta they read
    labels_on: Q  # over Benchmark: those where they label (annotator, QC, blind voter) in some campaign


class MemberScope(Protocol):
    def __call__(self, user) -> MemberRules:
        """What a user's campaign roles let them read of benchmarks."""


# Campaign roles are annotation's, and benchmarks imports none of it: the top app fills this slot with
# annotation's rules when Django starts (humanbaseline.apps).
member_scope: Slot[MemberScope] = Slot(MemberScope)


def reads_all_gold(user):
    """Staff and researchers: who read every benchmark, its items with source gold and meta, its campaigns' gold
    and reports, and benchmark-wide reports. A researcher reads none of that of the benchmarks they label on
    (`labelled_benchmarks`): annotators never see the gold of what they label. Everyone else reads what their
    campaign roles give them (`readable`, `gold_benchmarks`). The one home of this rule (annotation.policy asks it)."""
    if not user or not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists()


def _member_rule(user, kind):
    return member_scope.provider(user)[kind]


def labelled_benchmarks(user):
    """The ids of the benchmarks where the user labels in some campaign (a subquery)."""
    from .models import Benchmark

    return Benchmark.objects.filter(_member_rule(user, "labels_on")).values("pk")


# How each kind of row reaches its benchmark.
BENCHMARK_OF = {"benchmark": "pk", "task": "benchmark_id", "item": "task__benchmark_id"}


def readable(user, kind, queryset):
    """The rows of `queryset` (benchmarks, tasks or items: `kind`) that the user may read."""
    if not user or not user.is_authenticated:
        return queryset.none()
    if user.is_staff:
        return queryset
    rule = _member_rule(user, kind)
    if reads_all_gold(user):  # a researcher: every benchmark but those they label on, which their roles decide
        rule |= ~Q(**{f"{BENCHMARK_OF[kind]}__in": labelled_benchmarks(user)})
    return queryset.filter(rule)


def gold_benchmarks(user):
    """Ids of the benchmarks whose source gold (and item meta) the user reads; None: all of them."""
    from .models import Benchmark

    if not user or not user.is_authenticated:
        return set()
    if user.is_staff:
        return None
    if reads_all_gold(user):
        return set(Benchmark.objects.exclude(pk__in=labelled_benchmarks(user)).values_list("pk", flat=True))
    return set(Benchmark.objects.filter(_member_rule(user, "gold")).values_list("pk", flat=True))


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or bool(request.user and request.user.is_staff)


def staff_or_holder(user, permission):
    """Staff, or a signed-in user granted `permission` ("app.codename"): who may do a site-wide write."""
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm(permission)))


def can_import_items(user):
    """Who may load data into benchmarks from the browser: staff, or holders of benchmarks.add_item."""
    return staff_or_holder(user, "benchmarks.add_item")
