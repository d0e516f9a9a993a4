from rest_framework import permissions

from benchmarks.permissions import IsStaffOrReadOnly, gold_benchmarks, reads_all_gold


def can_evaluate_models(user):
    """Staff and researchers: those who read gold (benchmarks.permissions.reads_all_gold). Predictions show
    whether the model matched the gold answer, so annotators (who must not learn the gold) can neither read
    them nor start the runs that make them."""
    return reads_all_gold(user)


def with_readable_results(user, rows, benchmark="benchmark"):
    """Of `rows` (runs; or predictions, `benchmark` then the path to their run's benchmark), those of the benchmarks
    whose gold the user reads (benchmarks.permissions.gold_benchmarks): a run's results show the gold, so a
    researcher reads none of a benchmark they label on."""
    gold = gold_benchmarks(user)
    return rows if gold is None else rows.filter(**{f"{benchmark}_id__in": gold})


def reads_results_of(user, benchmark):
    """Whether the user reads the results of runs on `benchmark` (with_readable_results): who does not (a researcher
    who labels on it) may not start one either, since they could neither read nor cancel it. None: the command
    line (the operator)."""
    if user is None:
        return True
    gold = gold_benchmarks(user)
    return gold is None or benchmark.pk in gold


class IsResearcherOrStaff(permissions.BasePermission):
    message = "Model evaluation is open to staff and the researchers group."

    def has_permission(self, request, view):
        return can_evaluate_models(request.user)


class IsStaffToWrite(IsStaffOrReadOnly):
    message = "Only staff register models."
