from django.template.loader import render_to_string

from ..build import public
from .plots import all_plots
from .tables import all_tables


def render_html(report):
    """A standalone page: tables, provenance and the plots inlined as SVG."""
    data = public(report)
    return render_to_string("reports/report.html", {
        "report": data,
        "plots": all_plots(report),
        "tables": [{"table": t, "rows": [[(c.text(), c.reason, c.style, c.flag) for c in row] for row in t.rows]}
                   for t in all_tables(data)],
    })
