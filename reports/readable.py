"""What keeps a report from misleading: the scoring rule each model figure uses, small-sample flags, and
the generated "How to read this report" section. Plain rows in, plain rows out (no ORM)."""
from __future__ import annotations

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from metrics import STRATIFIED, small_sample
from metrics.agreement_intervals import METHOD as AGREEMENT_METHOD
from metrics.prediction_powered import COVERAGE_REPETITIONS, COVERAGE_SHORTFALL
from modeleval.modes import reads
from studies.vocabulary import Rule

from .texts import shown

# The rule a model figure is scored by: the report option `rule` picks one for every log-likelihood
# run ("run": each run's own setting); generation runs are always read by extraction.
GENERATION = "generation"
RUN_RULE = "run"
# Marked for translation: the report page names them in the reader's language (the stored report keeps English).
RULES = {
    Rule.ACC: gettext_noop("acc: the option with the highest summed log-likelihood (lm-eval's acc)"),
    Rule.ACC_NORM: gettext_noop("acc_norm: the option with the highest log-likelihood per character (lm-eval's "
                                "acc_norm)"),
    Rule.PER_TOKEN: gettext_noop("per-token: the option with the highest mean log-likelihood per token"),
    GENERATION: gettext_noop("generation with extraction: the option letter read from the generated text"),
}
GAP_RULES = (RUN_RULE, *(rule.value for rule in Rule))
# Prediction column holding each rule's pick for a log-likelihood run ("acc" depends on the run: see
# reports.sections.multiple_choice.answer_column).
RULE_COLUMNS = {Rule.ACC_NORM: "answer_norm", Rule.PER_TOKEN: "answer_per_token"}


def run_rule(run, chosen):
    """The rule a run's figures use under the report option `chosen`."""
    if not reads(run["mode"]).by_rule:
        return GENERATION
    return run["settings"].get("rule", Rule.PER_TOKEN) if chosen == RUN_RULE else chosen


def flag(row, counts, why=None, key="small_sample"):
    """Mark a row whose figures rest on too few items or raters: `counts` is [(n, minimum, what)].
    Sets row[key] to the reason (None when every count reaches its minimum); a row whose figures rest on
    different items flags each group under its own key (e.g. "gold_small_sample")."""
    row[key] = small_sample(counts, why)
    return row


def flagged_rows(report):
    """Every row carrying a small-sample flag, as (section, row)."""
    out = []

    def walk(section, value):
        if isinstance(value, dict):
            if value.get("small_sample") or value.get("gold_small_sample"):
                out.append((section, value))
            for key, sub in value.items():
                if not key.startswith("_") and isinstance(sub, (dict, list)):
                    walk(f"{section}.{key}" if section else key, sub)
        elif isinstance(value, list):
            for sub in value:
                walk(section, sub)

    walk("", {k: v for k, v in report.items() if k not in ("how_to_read", "provenance")})
    return out


def how_to_read(report):
    """The "How to read this report" section: [{topic, text}], generated from the report itself, in the active
    language (the stored report keeps English; the HTML and LaTeX renderings generate it again in the reader's)."""
    options, gold, scope = report["options"], report["gold"], report["scope"]
    sections = []
    text = _("Gold: %(citation)s, %(why)s.") % {"citation": gold["citation"], "why": shown(gold["why"])}
    if gold["declined"]:
        text += " " + _("Not used: %(citation)s (%(reason)s).") % gold["declined"]
    if gold["derived_from_campaign"]:
        text += " " + _("It was derived from the labels of campaign %(campaign)s (%(method)s).") % {
            "campaign": gold["derived_from_campaign"], "method": gold["method"]}
    for left in gold["left_out"]:
        text += " " + _("%(count)s item(s) have no label in it (%(reason)s: %(items)s); they are scored against "
                        "nothing and left out of every figure that needs gold.") % {
            "count": left["count"], "reason": left["reason"],
            "items": ", ".join(map(str, left["items"][:10])) + (", ..." if left["count"] > 10 else "")}
    for excluded in gold["excluded_campaigns"]:
        text += " " + _("Campaign %(campaign)s is not among the humans: %(reason)s.") % {
            "campaign": excluded["campaign_id"], "reason": excluded["reason"]}
    sections.append({"topic": "gold", "text": text})
    humans = ", ".join(map(str, scope["human_campaigns"])) or _("none")
    text = _("The humans are the labels of campaign(s) %(campaigns)s.") % {"campaigns": humans}
    positions = report["raters"]["positions"]
    if positions:
        text += " " + _("Raters of campaign(s) %(campaigns)s are positions in an imported file, not people (rater i is "
                        "whoever gave the i-th rating of an item): they count in agreement and in the ceiling, and are "
                        "left out of the per-person tables.") % {
            "campaigns": ", ".join(str(p["campaign_id"]) for p in positions)}
    sections.append({"topic": "humans", "text": text})
    rule = options["rule"]
    chosen = _("its run's own rule") if rule == RUN_RULE else RULES[rule].split(":")[0]
    # Each rule by its meaning: the text after the name (a colon, or the full-width colon of a Chinese text).
    meanings = [f"{name}: {re.split(r': |：', _(label), maxsplit=1)[-1]}." for name, label in RULES.items()]
    text = (_("Model accuracy, the gap, McNemar, positions and the item lists score each model by %(rule)s, named on "
              "every model figure.") % {"rule": chosen} + " " + " ".join(meanings))
    sections.append({"topic": "rules", "text": text})
    text = _("Every interval is a %(level)s percentile bootstrap with %(n)s resamples (seed %(seed)s). Per task, the "
             "gap's interval resamples the task's items with the human and the model answer kept together, on the "
             "items both answered. Over all tasks there are two: gap_low/gap_high, the within-task interval of the "
             "mean of the tasks, from a %(stratified)s; pooled_gap_low/pooled_gap_high, the item-level interval of the "
             "pooled items of every task. The one that matches how the people's items were drawn leads "
             "(interval_lead, first in the tables): within-task for a sample drawn inside each task with enough items "
             "in every task, item-level otherwise; with few items per task the within-task interval is too "
             "narrow.") % {"level": f"{options['confidence']:.0%}", "n": options["n_resamples"],
                            "seed": options["seed"], "stratified": _(STRATIFIED)}
    leads = {}
    for m in (report.get("multiple_choice") or {}).get("overall", {}).get("models", []):
        if m.get("interval_lead"):
            leads.setdefault((m["interval_lead"], m["interval_lead_why"]), []).append(m["model"])
    text += "".join(" " + _("Here the %(lead)s interval leads for %(models)s: %(why)s.") % {
        "lead": _(lead), "models": ", ".join(models), "why": _(why)} for (lead, why), models in leads.items())
    text += " " + _("Bradley-Terry intervals resample matches.") + " " + _(
        "Agreement's intervals (Fleiss' kappa, Krippendorff's alpha) are not percentile ones: %(method)s, with the "
        "same resamples and seed. Human-anchored intervals are normal ones, their method named on each row.") % {
        "method": _(AGREEMENT_METHOD)}
    sections.append({"topic": "intervals", "text": text})
    sections.append({"topic": "tests", "text": _(
        "McNemar is the exact two-sided test on the items where exactly one of human majority and model is right, "
        "per task (mcnemar_p) and over the pooled items of every task (pooled_mcnemar_p); no correction for "
        "testing many tasks and models is applied.")})
    if report.get("crowd") or report.get("human_anchored") or (report.get("alt_test") or {}).get("tests"):
        sections.append({"topic": "fewer labels", "text": _(
            "A typical person (the mean of the annotators' accuracies) and the aggregated crowd (one label per item "
            "by the campaign's rule) are two figures, named apart. Human-anchored intervals (PPI++) use people's "
            "labels on some items and a judge's answers on the items nobody labelled (a labelled item is never "
            "counted again among them: with every item labelled the interval is the classical one, and its row "
            "says so); each sits beside the classical interval from the "
            "labelled items alone, with lambda (0: classical) and the effective number of labels. The alternative "
            "annotator test lets a judge replace the people when it wins against half of them or more "
            "(Benjamini-Yekutieli), each compared after giving away the epsilon of the annotators' kind.")})
    sections += sequential_guide(report)
    flagged = flagged_rows(report)
    text = _("A figure from fewer than %(items)s items, and an agreement figure from fewer than %(agreement_items)s "
             "items or %(raters)s raters, is flagged \"small sample\" (its reason names the counts); a flagged "
             "agreement figure gets no Landis-Koch band.") % {
        "items": options["min_items"], "agreement_items": options["min_agreement_items"],
        "raters": options["min_raters"]}
    if report.get("human_anchored"):
        level = options["confidence"]
        text += " " + _(
            "A human-anchored row is flagged, whatever its count, when its interval or the classical one beside it "
            "covers less than %(floor).2f (its %(level)s level less %(shortfall)s) in %(repetitions)s campaigns "
            "simulated from its own labelled items at its own n and N (drawn again with replacement, or by its "
            "inclusion probabilities under active selection); its coverage columns show the shares.") % {
            "floor": level - COVERAGE_SHORTFALL, "level": f"{level:.0%}", "shortfall": COVERAGE_SHORTFALL,
            "repetitions": COVERAGE_REPETITIONS}
    text += " " + (_("%(n)s row(s) are flagged here, in %(sections)s.") % {
        "n": len(flagged), "sections": ", ".join(sorted({s for s, _row in flagged}))}
        if flagged else _("No row is flagged here."))
    sections.append({"topic": "flags", "text": text})
    if report.get("paper"):
        studies = ", ".join(_("%(study)s (Table %(tables)s)") % {
            "study": s["study"], "tables": ", ".join(t["table"] for t in s["tables"])}
            for s in report["paper"]["studies"])
        sections.append({"topic": "papers", "text": _(
            "The papers' tables beside ours: %(studies)s. Each model of a run that follows a study's preset is laid "
            "beside the paper's row of the same model (by its name, its endpoint's model name or its source's name), "
            "with the difference ours minus the paper's in the paper's unit; what our figure is, is named per row, "
            "and a model no row names (the packaged model, which no paper ran) is shown alone. The settings in which "
            "a run differs from the study are its protocol's differences.") % {"studies": studies}})
    return sections


def sequential_guide(report):
    """The reading guide's words on confidence sequences, when the report has any."""
    section = report.get("sequential") or {}
    if not section.get("gaps"):
        return []
    return [{"topic": "watching the gap", "text": _(
        "A confidence sequence is an interval that covers the truth, with the stated confidence, at every number of "
        "labels at once: it may be looked at after every label and the campaign stopped whenever it looks clear. "
        "A fixed-n interval (the human-anchored and classical intervals elsewhere in this report) is valid only at "
        "a number of labels fixed in advance; looked at after every label and stopped on when the gap looks clear, "
        "it is wrong about half the time. The sequences are wider for it (about 1.5 times at 500 labels). "
        "Verdict: separated when the sequence excludes 0; equivalent when it lies within ±%(margin)s "
        "(the reader's margin, in the gap's unit); else continue, with about how many more labels either verdict "
        "needs if the estimate and its spread stay as they are, and whether new items or more raters per item "
        "narrow it faster. The betting sequence needs no large-sample approximation but only answers in a known "
        "range. The report's rows do not keep the order the labels arrived in: the sequences take the labelled "
        "items in an order seeded by the report's seed.") % {"margin": f"{section['margin']:g}"}}]
