from rest_framework import permissions

from benchmarks.permissions import RESEARCHER_GROUP


def can_evaluate_models(user):
    """Staff and researchers. Predictions show whether the model matched the gold answer, so
    annotators (who must not learn the gold) can neither read them nor start the runs that make them."""
    if not user or not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists()


class IsResearcherOrStaff(permissions.BasePermission):
    message = "Model evaluation is open to staff and the researchers group."

    def has_permission(self, request, view):
        return can_evaluate_models(request.user)


class IsStaffToWrite(permissions.BasePermission):
    message = "Only staff register models."

    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or bool(request.user and request.user.is_staff)
