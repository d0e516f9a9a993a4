"""The tables and the plot of the crowd, human-anchored and alternative-annotator sections, for HTML, LaTeX and
CSV alike."""
from django.utils.translation import gettext
from matplotlib import rc_context

from ..sections.human_anchored import method_text
from .plots import RC, _figure, _legend, to_svg
from .tables import Cell, Table, cell, shown


def crowd_table(report):
    rows = report.get("crowd") or []
    if not rows:
        return None
    header = ["Campaign", "Task", "Items with gold", "Annotators", "A typical person", "Aggregated crowd", "Rule",
              "Majority vote", "Annotator model", "Model's crowd", "Items where the model differs from majority vote"]
    body = []
    for r in rows:
        model = r.get("model")
        body.append([Cell(r["campaign"], style="text"), Cell(r["task"], style="text"), Cell(r["n_gold"], style="int"),
                     Cell(r["n_annotators"], style="int"), cell(r, "typical_person_accuracy", "percent"),
                     cell(r, "crowd_accuracy", "percent"), Cell(r["rule"], style="text"),
                     cell(r, "majority_accuracy", "percent"), Cell(model or "--", style="text"),
                     cell(r, f"{model}_accuracy", "percent") if model else Cell(None, "no labels"),
                     Cell(r.get("majority_disagreement"), "no annotator model", style="percent")])
    return Table("crowd", "A typical person and the aggregated crowd: accuracy against gold (%)", header, body,
                 "A typical person: the mean of the annotators' own accuracies. Aggregated crowd: one label per item "
                 "by the campaign's rule (its aggregation setting), scored against the gold. The two answer different "
                 "questions and are not interchangeable. Majority vote is shown beside every annotator model's crowd, "
                 "with the share of items where the two labels differ (a tie in the vote counts as a difference).")


def competence_table(report):
    rows = [(r, a) for r in report.get("crowd") or [] for a in r.get("annotators", [])]
    if not rows:
        return None
    header = ["Campaign", "Task", "Annotator", "Model", "Competence", "Gold accuracy", "Items with gold"]
    body = [[Cell(r["campaign"], style="text"), Cell(r["task"], style="text"), Cell(a["annotator"], style="text"),
             Cell(r["model"], style="text"), Cell(a["competence"]), Cell(a["gold_accuracy"], "no item with gold"),
             Cell(a["n_gold"], style="int")] for r, a in rows]
    return Table("competence", "Annotators: estimated competence beside gold accuracy", header, body,
                 "Competence: the probability that the annotator's label is the true one under the annotator model, "
                 "fitted without the gold; gold accuracy: against the report's gold.")


def anchored_table(report, key, title):
    section = report.get("human_anchored") or {}
    rows = section.get(key) or []
    if not rows:
        return None
    header = ["Task", "Estimand", "Model", "Judge", "n", "N", "Method", "lambda", "Human-anchored", "Low", "High",
              "Width", "Coverage", "Classical", "Low", "High", "Width", "Coverage", "Effective n"]
    body = [[Cell(r["task"], style="text"), Cell(shown(r["estimand"]), style="text"),
             Cell(r.get("model", ""), style="text"),
             Cell(r["judge"], style="text"), cell(r, "n", "int"), cell(r, "N", "int"),
             Cell(shown(r["method"].split(":")[0]), style="text"), cell(r, "lam"),
             cell(r, "anchored_estimate"), cell(r, "anchored_low"), cell(r, "anchored_high"), cell(r, "anchored_width"),
             cell(r, "coverage"), cell(r, "classical_estimate"), cell(r, "classical_low"), cell(r, "classical_high"),
             cell(r, "classical_width"), cell(r, "classical_coverage"), cell(r, "effective_n")] for r in rows]
    confidence = section.get("confidence", 0.95)
    methods = " ".join(f"{shown(m)}." for m in dict.fromkeys(r["method"] for r in rows))
    return Table(f"human_anchored_{key}", gettext("%(title)s: human-anchored (PPI++) beside classical, %(level)s") % {
        "title": gettext(title), "level": f"{confidence:.0%}"}, header, body,
                 gettext("%(method)s. Methods here: %(methods)s") % {"method": method_shown(section.get("method", "")),
                                                                    "methods": methods})


def method_shown(text):
    """The section's method in the reader's language where it is the one this code writes (a report stored by an
    older version keeps its own words)."""
    return method_text(gettext) if text == method_text() else shown(text)


def alt_test_table(report):
    tests = (report.get("alt_test") or {}).get("tests") or []
    if not tests:
        return None
    header = ["Campaign", "Task", "Judge", "Annotators", "Kind", "epsilon", "Items", "Winning rate",
              "Advantage probability", "Passes", "Minimums"]
    body = []
    for t in tests:
        unmet = [c["check"] for c in t["checks"] if not c["met"]]
        body.append([Cell(t["campaign"], style="text"), Cell(t["task"], style="text"), Cell(t["judge"], style="text"),
                     Cell(t["n_annotators"], style="int"), Cell(t["annotator_kind"], style="text"),
                     Cell(t["epsilon"]), Cell(t["n_items"], style="int"), cell(t, "winning_rate"),
                     cell(t, "advantage_probability"),
                     Cell(gettext("yes") if t["passed"] else gettext("no") if t["passed"] is not None else None,
                          (t.get("undefined") or {}).get("passed"), style="text"),
                     Cell(gettext("met") if not unmet
                          else gettext("not met: %(checks)s") % {"checks": "; ".join(unmet)}, style="text")])
    return Table("alt_test", "May the judge replace these people? The alternative annotator test", header, body,
                 "Each annotator left out in turn; the judge and the left-out person scored against the others; a "
                 "one-sided test per annotator with the epsilon of their kind (crowd 0.1, skilled 0.15, experts 0.2), "
                 "Benjamini-Yekutieli across annotators. The judge passes when it wins against half of them or more. "
                 "Advantage probability: the chance that the judge is as good as a random annotator or better.")


def anchored_tables(report):
    return [crowd_table(report), competence_table(report),
            anchored_table(report, "humans", "The people's figure"),
            anchored_table(report, "models", "Model accuracy"),
            anchored_table(report, "gaps", "Human minus model"), alt_test_table(report)]


def width_plot(report):
    """Interval width against the human labels used: the classical interval beside the human-anchored one, per
    task and judge."""
    curves = [r for r in (report.get("human_anchored") or {}).get("humans", []) if r.get("_curve")]
    if not curves:
        return None
    with rc_context(RC):
        fig = _figure(7, 3.2)
        ax = fig.add_subplot()
        for r in curves[:8]:
            points = r["_curve"]
            name = f"{r['task']} · {r['judge']}"
            line = ax.plot([p["n"] for p in points], [p["human_anchored"] for p in points], marker="o",
                           label=gettext("%(name)s (human-anchored)") % {"name": name})[0]
            ax.plot([p["n"] for p in points], [p["classical"] for p in points], marker="s", linestyle="--",
                    color=line.get_color(), label=gettext("%(name)s (classical)") % {"name": name})
        ax.set_xscale("log")
        ax.set_xlabel(gettext("human labels used"))
        ax.set_ylabel(gettext("interval width"))
        ax.grid(alpha=0.3)
        _legend(fig, ax)
        return to_svg(fig)


def _reasoned(row, reason):
    """The row with a reason for every figure that is missing one (a CSV row never has an empty value alone)."""
    undefined = dict(row.get("undefined") or {})
    undefined.update({k: reason for k, v in row.items() if v is None and k not in undefined})
    return {**row, "undefined": undefined}


def csv_lines(report, lines):
    """The sections' rows for the CSV (`lines`: the CSV module's row writer)."""
    for row in report.get("crowd") or []:
        yield from lines("crowd", _reasoned({k: v for k, v in row.items() if k != "annotators"}, "no labels"))
        for person in row.get("annotators", []):
            yield from lines("crowd.annotators", _reasoned({**person, "model": row["model"]},
                                                           "no labelled item of theirs has gold"), task=row["task"])
    for key in ("humans", "models", "gaps"):
        for row in (report.get("human_anchored") or {}).get(key, []):
            yield from lines(f"human_anchored.{key}", _reasoned({k: v for k, v in row.items() if not k.startswith("_")},
                                                                 "fewer than 2 labelled items"))
    for test in (report.get("alt_test") or {}).get("tests", []):
        yield from lines("alt_test", _reasoned({k: v for k, v in test.items() if k not in ("checks", "per_annotator")},
                                               "no item with two or more people"), model=test["judge"])
        for person in test["per_annotator"]:
            yield from lines("alt_test.annotators", _reasoned(person, "undefined"), task=test["task"],
                             model=test["judge"])
