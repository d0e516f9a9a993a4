from django.template.loader import render_to_string
from django.utils import formats
from django.utils.dateparse import parse_datetime

from ..build import public
from ..readable import how_to_read
from ..texts import shown
from .anchored import anchored_tables, width_plot
from .judge_card import judge_card_tables
from .plots import all_plots
from .sequential import sequential_table
from .tables import all_tables, campaign_names, in_language


def render_html(report):
    """A standalone page: tables, provenance and the plots inlined as SVG, in the active language (reports.render)."""
    data = public(report)
    widths = width_plot(report)
    tables = [in_language(t) for t in all_tables(data)
              + [t for t in (*anchored_tables(data), sequential_table(data)) if t is not None]
              + judge_card_tables(data)]
    generated = parse_datetime(data["generated_at"])
    return render_to_string("reports/report.html", {
        "report": data, "campaign_name": campaign_names(data).get(data["scope"]["campaign_id"]),
        "how_to_read": how_to_read(data), "gold_why": shown(data["gold"]["why"]),
        "generated_at": formats.date_format(generated, "DATETIME_FORMAT") if generated else data["generated_at"],
        "plots": all_plots(report) + ([("Interval width against human labels used", widths)] if widths else []),
        "tables": [table_entry(t) for t in tables],
    })


def table_entry(table):
    """A table for the template: each cell as (text, reason, style, flag, note, note's mark), and the notes."""
    marks = table.note_marks()
    return {"table": table, "rows": [[(c.text(), c.reason, c.style, c.flag, c.note, marks.get(c.note)) for c in row]
                                     for row in table.rows],
            "notes": [(mark, text) for text, mark in marks.items()]}
