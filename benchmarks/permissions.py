from rest_framework import permissions

RESEARCHER_GROUP = "researchers"
# Apps that know more roles add a check here (annotation: campaign viewers, managers and experts), so
# that benchmarks imports none of them.
GOLD_VISIBILITY_CHECKS = []


def can_see_gold(user):
    """Staff and researchers see source gold; annotators never do (it would bias their labels)."""
    if not user or not user.is_authenticated:
        return False
    return (user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists()
            or any(check(user) for check in GOLD_VISIBILITY_CHECKS))


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or bool(request.user and request.user.is_staff)


def can_import_items(user):
    """Who may load data into benchmarks from the browser: staff, or holders of benchmarks.add_item."""
    return bool(user and user.is_authenticated and (user.is_staff or user.has_perm("benchmarks.add_item")))
