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


class MemberScope(Protocol):
    def __call__(self, user) -> MemberRules:
        """What a user's campaign roles let them read of benchmarks."""


# Campaign roles are annotation's, and benchmarks imports none of it: the top app fills this slot with
# annotation's rules when Django starts (humanbaseline.apps).
member_scope: Slot[MemberScope] = Slot(MemberScope)


def can_see_gold(user):
    """Staff and researchers read every benchmark, its items with source gold and meta, and benchmark-wide
    reports. Everyone else reads what their campaign roles give them (`readable`, `gold_benchmarks`)."""
    if not user or not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists()


def _member_rule(user, kind):
    return member_scope.provider(user)[kind]


def readable(user, kind, queryset):
    """The rows of `queryset` (benchmarks, tasks or items: `kind`) that the user may read."""
    if not user or not user.is_authenticated:
        return queryset.none()
    if can_see_gold(user):
        return queryset
    return queryset.filter(_member_rule(user, kind))


def gold_benchmarks(user):
    """Ids of the benchmarks whose source gold (and item meta) the user reads; None: all of them."""
    if can_see_gold(user):
        return None
    from .models import Benchmark

    if not user or not user.is_authenticated:
        return set()
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
