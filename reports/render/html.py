from django.template.loader import render_to_string

from ..build import public
from .anchored import anchored_tables, width_plot
from .plots import all_plots
from .tables import all_tables


def render_html(report):
    """A standalone page: tables, provenance and the plots inlined as SVG."""
    data = public(report)
    widths = width_plot(report)
    tables = all_tables(data) + [t for t in anchored_tables(data) if t is not None]
    return render_to_string("reports/report.html", {
        "report": data,
        "plots": all_plots(report) + ([("Interval width against human labels used", widths)] if widths else []),
        "tables": [{"table": t, "rows": [[(c.text(), c.reason, c.style, c.flag) for c in row] for row in t.rows]}
                   for t in tables],
    })
