from rest_framework import permissions

RESEARCHER_GROUP = "researchers"
# What campaign members read of benchmarks. The annotation app registers a function of the user that
# returns Q objects over Benchmark ("benchmark"), Task ("task"), Item ("item"), and the benchmarks
# whose source gold and item meta they read ("gold"), so that benchmarks imports none of it.
MEMBER_SCOPES = []


def can_see_gold(user):
    """Staff and researchers read every benchmark, its items with source gold and meta, and benchmark-wide
    reports. Everyone else reads what their campaign roles give them (`readable`, `gold_benchmarks`)."""
    if not user or not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists()


def _member_rule(user, kind):
    rules = [scope(user)[kind] for scope in MEMBER_SCOPES]
    if not rules:
        return None
    rule = rules[0]
    for other in rules[1:]:
        rule |= other
    return rule


def readable(user, kind, queryset):
    """The rows of `queryset` (benchmarks, tasks or items: `kind`) that the user may read."""
    if not user or not user.is_authenticated:
        return queryset.none()
    if can_see_gold(user):
        return queryset
    rule = _member_rule(user, kind)
    return queryset.none() if rule is None else queryset.filter(rule)


def gold_benchmarks(user):
    """Ids of the benchmarks whose source gold (and item meta) the user reads; None: all of them."""
    if can_see_gold(user):
        return None
    from .models import Benchmark

    rule = _member_rule(user, "gold") if user and user.is_authenticated else None
    return set() if rule is None else set(Benchmark.objects.filter(rule).values_list("pk", flat=True))


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or bool(request.user and request.user.is_staff)


def staff_or_holder(user, permission):
    """Staff, or a signed-in user granted `permission` ("app.codename"): who may do a site-wide write."""
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm(permission)))


def can_import_items(user):
    """Who may load data into benchmarks from the browser: staff, or holders of benchmarks.add_item."""
    return staff_or_holder(user, "benchmarks.add_item")
