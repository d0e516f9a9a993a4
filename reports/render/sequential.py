"""The table of the gap while labels arrive (confidence sequences beside fixed-n intervals, and the verdict), for
HTML, LaTeX and CSV alike."""
from django.utils.translation import gettext, gettext_noop

from .tables import Cell, Table, cell, shown

VERDICT_TEXT = {"separated": gettext_noop("separated"), "equivalent": gettext_noop("equivalent within the margin"),
                "continue": gettext_noop("continue")}


def verdict_text(row):
    """The verdict in words: separated, equivalent, or continue with about how many more labels and where."""
    text = VERDICT_TEXT.get(row.get("verdict"), "")
    if row.get("verdict") != "continue":
        return gettext(text) if text else text
    if row.get("more_labels") is None:
        return gettext("continue: no verdict in sight within the %(n)s items") % {"n": row["N"]}
    return gettext("continue: about %(more)s more labels (%(which)s) to look %(reaches)s") % {
        "more": row["more_labels"], "which": gettext(row["next_labels"]), "reaches": gettext(row["reaches"])}


def sequential_table(report):
    section = report.get("sequential") or {}
    rows = section.get("gaps") or []
    if not rows:
        return None
    header = ["Campaign", "Task", "Model", "Judge", "n", "N", "Sequence (PPI++)", "Low", "High",
              "Sequence (classical)", "Low", "High", "Betting", "Low", "High", "Fixed-n low", "Fixed-n high",
              "Verdict", "Betting's verdict"]
    body = [[Cell(r["campaign"], style="text"), Cell(r["task"], style="text"), Cell(r["model"], style="text"),
             Cell(r["judge"], style="text"), cell(r, "n", "int"), cell(r, "N", "int"),
             cell(r, "cs_active_estimate" if r["weighted"] else "cs_anchored_estimate"),
             cell(r, "cs_active_low" if r["weighted"] else "cs_anchored_low"),
             cell(r, "cs_active_high" if r["weighted"] else "cs_anchored_high"),
             cell(r, "cs_classical_estimate"), cell(r, "cs_classical_low"), cell(r, "cs_classical_high"),
             cell(r, "cs_betting_estimate"), cell(r, "cs_betting_low"), cell(r, "cs_betting_high"),
             cell(r, "fixed_anchored_low"), cell(r, "fixed_anchored_high"),
             Cell(verdict_text(r), style="text"),
             Cell(gettext(VERDICT_TEXT.get(r.get("betting_verdict"), r.get("betting_verdict") or "--")), style="text")]
            for r in rows]
    confidence, margin = section.get("confidence", 0.95), section.get("margin", 0.05)
    return Table("sequential", gettext("Human minus model while labels arrive: confidence sequences, %(level)s, "
                                       "equivalence margin ±%(margin)s") % {"level": f"{confidence:.0%}",
                                                                            "margin": f"{margin:g}"}, header, body,
                 " ".join((shown(section.get("method", "")), gettext(
                     "Verdict: separated when the sequence excludes 0, equivalent when it lies within the margin, else "
                     "about how many more labels either needs if the estimate and its spread stay as they are (active "
                     "draws: the weighted sequence leads). Fixed-n: the PPI++ interval, valid only at a number of "
                     "labels fixed in advance."))).strip())


def sequential_csv_lines(report, lines, reasoned):
    """The section's rows for the CSV (`lines`: the CSV module's row writer), without the plotted path."""
    for row in (report.get("sequential") or {}).get("gaps", []):
        yield from lines("sequential", reasoned({k: v for k, v in row.items() if k != "path"}, "undefined"))
