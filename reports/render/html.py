from django.template.loader import render_to_string

from ..build import public
from .anchored import anchored_tables, width_plot
from .judge_card import judge_card_tables
from .plots import all_plots
from .tables import all_tables


def render_html(report):
    """A standalone page: tables, provenance and the plots inlined as SVG."""
    data = public(report)
    widths = width_plot(report)
    tables = all_tables(data) + [t for t in anchored_tables(data) if t is not None] + judge_card_tables(data)
    return render_to_string("reports/report.html", {
        "report": data,
        "plots": all_plots(report) + ([("Interval width against human labels used", widths)] if widths else []),
        "tables": [table_entry(t) for t in tables],
    })


def table_entry(table):
    """A table for the template: each cell as (text, reason, style, flag, note, note's mark), and the notes."""
    marks = table.note_marks()
    return {"table": table, "rows": [[(c.text(), c.reason, c.style, c.flag, c.note, marks.get(c.note)) for c in row]
                                     for row in table.rows],
            "notes": [(mark, text) for text, mark in marks.items()]}
