"""The judge cards as tables, for HTML, LaTeX and CSV alike: one row per judge run, and its label savings per
estimand."""
from django.utils.translation import gettext

from .tables import Cell, Table, figure_cell, shown


def _interval(agreement):
    if agreement["value"] is None:
        return Cell(None, agreement.get("undefined_reason") or "undefined")
    low, high = agreement["low"], agreement["high"]
    bounds = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    value = f"{agreement['value']:.3f}{bounds}"
    if agreement["statistic"] == "cohen_kappa":
        return Cell(gettext("kappa %(value)s") % {"value": value}, style="text")
    if agreement["statistic"] == "spearman":
        return Cell(gettext("Spearman %(value)s") % {"value": value}, style="text")
    return Cell(f"{agreement['statistic']} {value}", style="text")


def _people(card):
    return card["savings"][0] if card["savings"] else None


def card_table(report):
    section = report.get("judge_cards") or {}
    cards = section.get("cards") or []
    if not cards:
        return None
    header = ["Task", "Judge", "Verdicts", "Agreement with the people", "Alternative annotator test", "Winning rate",
              "Labels saved (PPI++, %)", "rho^2 (pilot)", "Expected saved (%)", "Swap consistency (%)", "In short"]
    body = []
    for card in cards:
        test, people, swap = card["alt_test"], _people(card), card.get("swap")
        origin = (gettext("imported (%(file)s)") % {"file": card.get("file")} if card.get("origin") == "imported"
                  else gettext("run here"))
        passed = test["passed"]
        body.append([
            Cell(card["task"], style="text"), Cell(card["judge"], style="text"), Cell(origin, style="text"),
            _interval(card["agreement"]),
            Cell(gettext("passes") if passed else gettext("fails") if passed is False else None,
                 test.get("undefined_reason"), style="text"),
            figure_cell(test["winning_rate"], test.get("undefined_reason")),
            figure_cell(people["realised_saved"] if people else None,
                        (people or {}).get("undefined_reason") or "no labelled item", "percent"),
            figure_cell(people["rho_squared"] if people else None, "the labelled items or the judge do not vary"),
            figure_cell(people["expected_saved"] if people else None, "no pilot correlation", "percent"),
            figure_cell(None if swap is None else swap["consistency"],
                        "not a pairwise judge" if card["kind"] != "pairwise" else "no pair read in both orders",
                        "percent"),
            Cell(shown(card["verdict"]), style="text")])
    gold = section.get("gold") or {}
    return Table("judge_cards", "Judge cards: may the judge replace the people, and how many labels does it save?",
                 header, body,
                 gettext("Agreement: Cohen's kappa of the judge and the people's majority label (labels), Spearman's "
                         "rho of the judge and the people's mean rating (ratings), with percentile bootstrap intervals "
                         "over items. The alternative annotator test and the savings answer two questions: a judge "
                         "that fails the test may still save labels. Labels saved: 1 - n / effective n of PPI++ on the "
                         "people's figure (realised); rho^2: the squared correlation of the people's figure and the "
                         "judge's stand-in on the labelled items, the share a pilot expects to save with many "
                         "judge-only items. Where the judge is no more accurate than the model judged, no more than a "
                         "factor of %(factor)s (half the labels) is claimed.")
                 % {"factor": f"{section.get('no_better_factor', 2):g}"} + " "
                 + gettext("Gold: %(gold)s.") % {"gold": shown(gold.get("text", ""))})


def savings_table(report):
    cards = (report.get("judge_cards") or {}).get("cards") or []
    rows = [(card, s) for card in cards for s in card["savings"]]
    if not rows:
        return None
    header = ["Task", "Judge", "Estimand", "n labelled", "N judge-only", "Saved (realised, %)", "Factor (realised)",
              "rho^2", "Expected saved (%)", "Expected saved with these N (%)", "Judge accuracy", "Model accuracy",
              "Capped"]
    body = [[Cell(card["task"], style="text"), Cell(card["judge"], style="text"),
             Cell(shown(s["estimand"]), style="text"),
             Cell(s["n"], style="int"), Cell(s["N"], style="int"),
             figure_cell(s["realised_saved"], s.get("undefined_reason"), "percent"),
             figure_cell(s["realised_factor"], s.get("undefined_reason"), "decimal"),
             figure_cell(s["rho_squared"], "the labelled items or the judge's stand-in do not vary"),
             figure_cell(s["expected_saved"], "no pilot correlation", "percent"),
             figure_cell(s["expected_saved_here"], "no pilot correlation", "percent"),
             figure_cell(s["judge_accuracy"], "not a model's accuracy"),
             figure_cell(s["model_accuracy"], "not a model's accuracy"),
             Cell(shown(s["cap_reason"]) or gettext("no"), style="text")] for card, s in rows]
    return Table("judge_savings", "Human labels each judge saves under PPI++, per estimand", header, body,
                 "Realised: from the labelled and judged items as they are. Expected: rho^2 from the same items read "
                 "as a pilot; with N judge-only items beside n labelled ones PPI++ saves about rho^2 N / (n + N).")


def judge_card_tables(report):
    return [t for t in (card_table(report), savings_table(report)) if t is not None]


def _row(keys, figures, reason):
    """A CSV row: the figures, each missing one with its reason (a CSV value is never empty alone)."""
    return {**keys, **figures, "undefined": {k: reason or "undefined" for k, v in figures.items() if v is None}}


def csv_lines(report, lines):
    """The cards' figures for the CSV (`lines`: the CSV module's row writer)."""
    for card in (report.get("judge_cards") or {}).get("cards") or []:
        keys = {"task": card["task"], "judge": card["judge"]}
        agreement = card["agreement"]
        yield from lines("judge_cards.agreement", _row(keys, {agreement["statistic"]: agreement["value"],
                                                              "low": agreement["low"], "high": agreement["high"]},
                                                       agreement.get("undefined_reason")))
        test = card["alt_test"]
        yield from lines("judge_cards.alt_test", _row(keys, {k: test[k] for k in ("winning_rate",
                                                                                  "advantage_probability", "passed")},
                                                      test.get("undefined_reason")))
        for s in card["savings"]:
            figures = {k: s[k] for k in ("realised_saved", "realised_factor", "rho_squared", "expected_saved",
                                         "expected_saved_here", "capped")}
            yield from lines("judge_cards.savings", _row({**keys, "estimand": s["estimand"]}, figures,
                                                         s.get("undefined_reason") or "the labelled items or the "
                                                                                      "judge's stand-in do not vary"))
        if card.get("swap"):
            yield from lines("judge_cards.swap", _row(keys, {"consistency": card["swap"]["consistency"]},
                                                      "no pair read in both orders"))
