"""The human-versus-model report, assembled from plain rows with `metrics` (no ORM here).

`build_report(ReportData, ReportOptions)` returns a JSON-ready dict whose keys are documented in
reports/SCHEMA.md. Conventions: every table is a list of flat rows; a statistic that cannot be
computed is null and its row's `undefined` maps the key to the reason; no NaN ever leaves here.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime

from django.utils.translation import gettext_noop

from .contract import SCHEMA_VERSION, ReportData, ReportOptions
from .readable import RULES, how_to_read
from .rows import Rows
from .sections.agreement import agreement_section
from .sections.annotators import annotator_section
from .sections.human_anchored import alt_test_section, crowd_section, human_anchored_section
from .sections.judge_card import judge_card_section
from .sections.multiple_choice import item_lists, mc_section
from .sections.pairwise import pairwise_section
from .sections.paper import paper_section
from .sections.provenance import provenance
from .sections.ratings import rating_section
from .sections.sequential import sequential_section


def build_report(data: ReportData, options: ReportOptions = ReportOptions(), generated_at=None,
                 progress=None, parts=None) -> dict:
    """`progress(fraction, step)`, when given, hears how far the sections have got; `parts`
    (reports.parts.Parts), when given, holds the figures per task a computation before made from the same rows."""
    progress = progress or (lambda fraction, step: None)
    rows = Rows(data)
    rows.parts = parts
    progress(0.35, gettext_noop("multiple choice"))
    mc = mc_section(rows, options)
    progress(0.6, gettext_noop("ratings"))
    ratings = rating_section(rows, options)
    progress(0.7, gettext_noop("agreement and annotators"))
    report = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": (generated_at or datetime.now(UTC)).isoformat(),
        "scope": {"benchmark": data.benchmark["slug"], "campaign_id": data.campaign_id,
                  "gold": data.gold_version["citation"] if data.gold_version else "source",
                  "human_campaigns": sorted(rows.human_campaigns)},
        "gold": gold_block(data),
        "options": asdict(options),
        "rules": RULES,
        "raters": {"positions": [
            {"campaign_id": c, "n_positions": len({a for cc, a in zip(data.annotations["campaign_id"],
                                                                     data.annotations["annotator_id"], strict=True)
                                                   if cc == c}),
             "note": "raters are positions in an imported file, not people: left out of per-person tables"}
            for c in sorted(rows.position_campaigns)]},
        "tasks": [{"task": t["slug"], "name": t["name"], "dimension": t["dimension"], "kind": rows.kind[t["id"]],
                   "primary": t["form"]["primary"], "n_items": len(rows.items_of[t["id"]]),
                   "n_gold": sum(rows.gold[i] is not None for i in rows.items_of[t["id"]])} for t in data.tasks],
        "campaigns": [{"campaign_id": c["id"], "name": c["name"], "protocol": c["protocol"], "source": c["source"],
                       "rater_group": rows.group[c["id"]], "raters_are_positions": c["id"] in rows.position_campaigns}
                      for c in data.campaigns],
        "models": [{"model": rows.run_label[r["id"]], "run_id": r["id"], "name": r["model__name"], "mode": r["mode"],
                    "position_policy": r["position_policy"]} for r in data.runs],
        "agreement": agreement_section(rows, options),
        "annotators": annotator_section(rows, options),
        "multiple_choice": mc,
        "ratings": ratings,
        "pairwise": pairwise_section(rows, options),
        "crowd": crowd_section(rows, options),
        "human_anchored": human_anchored_section(rows, options),
        "alt_test": alt_test_section(rows, options),
        "sequential": sequential_section(rows, options),
        "judge_cards": judge_card_section(rows, options),
        "item_lists": item_lists(rows, mc, options.item_list_limit),
        "provenance": provenance(rows),
    }
    report["paper"] = paper_section(rows, report)
    report["how_to_read"] = how_to_read(report)
    return report


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while a report is read and built: the millions of small objects it
    makes (decoded rows, per-item lists) hold no cycles, and each full collection walked all of them. Whatever is
    left for it is collected when it runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def gold_block(data: ReportData):
    """Which gold the report uses and why (see reports.gold); a bare default when the rows carry none."""
    citation = data.gold_version["citation"] if data.gold_version else "source"
    return {"citation": citation, "chosen_by": "request" if data.gold_version else "source",
            "why": "given with the report's data" if data.gold_version else "the gold published with the data",
            "declined": None, "excluded_campaigns": [], "derived_from_campaign": None,
            "method": "source", "left_out": [], **data.gold_choice}


def public(report):
    """The report without the working data kept for plots (keys starting with "_"), each row's
    `undefined` reasons after its figures."""
    if isinstance(report, dict):
        out = {k: public(v) for k, v in report.items() if not k.startswith("_") and k != "undefined"}
        if "undefined" in report:
            out["undefined"] = report["undefined"]
        return out
    if isinstance(report, list):
        return [public(v) for v in report]
    return report
