from rest_framework import permissions

from benchmarks.permissions import IsStaffOrReadOnly, reads_all_gold


def can_evaluate_models(user):
    """Staff and researchers: those who read gold (benchmarks.permissions.reads_all_gold). Predictions show
    whether the model matched the gold answer, so annotators (who must not learn the gold) can neither read
    them nor start the runs that make them."""
    return reads_all_gold(user)


class IsResearcherOrStaff(permissions.BasePermission):
    message = "Model evaluation is open to staff and the researchers group."

    def has_permission(self, request, view):
        return can_evaluate_models(request.user)


class IsStaffToWrite(IsStaffOrReadOnly):
    message = "Only staff register models."
