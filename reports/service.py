"""One entry point for the API and the command: scope -> rows -> report dict."""
from .build import build_report, collector_paused
from .contract import ReportOptions
from .selectors import report_data, resolve_scope


def make_report(benchmark, campaign=None, gold_version=None, options=ReportOptions()):
    """The report dict (with its plot data) for a benchmark, optionally one campaign and one gold version."""
    scope = resolve_scope(benchmark, campaign, gold_version)
    with collector_paused():
        return build_report(report_data(scope), options)
