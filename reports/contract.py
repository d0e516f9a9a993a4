"""The report's data contract: the plain rows it is built from (ReportData), the choices a reader makes
(ReportOptions) and the version of the output's shape (documented in reports/SCHEMA.md)."""
from __future__ import annotations

from dataclasses import dataclass, field

from metrics import MIN_ITEMS

from .readable import GAP_RULES, RUN_RULE

SCHEMA_VERSION = 1
EQUIVALENCE_MARGIN_MAX = 10.0


@dataclass
class ReportData:
    """The plain rows a report is built from (see reports.selectors.report_data)."""

    benchmark: dict
    campaign_id: int | None
    gold_version: dict | None  # None: the source gold of the items
    tasks: list  # {id, slug, name, dimension, form}
    items: dict  # columns: id, task_id, external_id, content_hash, domain, n_options, model_a, model_b[, source_gold]
    gold: dict | None  # item id -> primary gold value (gold version); None: read items["source_gold"]
    # {id, name, protocol, source, settings: [{version, overlap, guidelines, guidelines_by_language, note, ...}]}
    campaigns: list
    batches: list  # {id, campaign_id, number, state, round, settings__version}
    annotations: dict  # columns: campaign_id, batch_id, item_id, annotator_id, round, current, value, excluded,
    #                    dwell_seconds, answers {question key: column}
    qc: list  # (batch id, round, decision, item id, qc value)
    users: dict  # user id -> username
    runs: list  # {id, mode, settings, prompt_*, position_policy, seed, finished_at, model__*, task_ids}
    predictions: dict  # columns: run_id, item_id, variant, answer, answer_norm, answer_per_token, acc_pick,
    #                    parse_status, gold, rating
    code: dict = field(default_factory=dict)
    # The whole dialogues behind arena pairs (see reports.selectors.arena.arena_dialogues): columns item_id,
    # system, utterances, seed_utterances, loop_start; labels: (item, annotator, is_ai, first_ai_turn).
    dialogues: dict = field(default_factory=dict)
    # Which gold and why (reports.gold.GoldChoice.describe): citation, chosen_by, why, declined,
    # excluded_campaigns, derived_from_campaign, method, left_out.
    gold_choice: dict = field(default_factory=dict)
    # Pairwise judge runs' two steps per prediction (reports.selectors.arena.pairwise_steps): columns run_id, item_id,
    # source_a, source_b, label_1, a_position_1, label_2, a_position_2, decided (the loop's outcome for
    # conversation A where the loop detector decided the pair, else None); None without pairwise tasks.
    pairwise_steps: dict | None = None
    # Items drawn for labelling by active selection: item id -> its inclusion probability when it was drawn.
    inclusion: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ReportOptions:
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    item_list_limit: int = 50
    # How log-likelihood runs are scored for the gap: run (each run's own), acc, acc_norm, per_token.
    rule: str = RUN_RULE
    min_items: int = MIN_ITEMS  # figures from fewer items are flagged "small sample"
    min_agreement_items: int = 30  # agreement figures from fewer items are flagged, with no Landis-Koch band
    min_raters: int = 3  # ... and from fewer raters per item
    # A gap whose confidence sequence lies within [-margin, margin] is "equivalent" (the gap's own unit: rating
    # points or a share of items); a researcher's setting, between 0 and EQUIVALENCE_MARGIN_MAX.
    equivalence_margin: float = 0.05

    def __post_init__(self):
        if self.rule not in GAP_RULES:
            raise ValueError(f"rule: expected one of {', '.join(GAP_RULES)}, got {self.rule!r}")
        for name in ("min_items", "min_agreement_items", "min_raters"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more")
        if not 0 <= self.equivalence_margin <= EQUIVALENCE_MARGIN_MAX:
            raise ValueError(f"equivalence_margin must be between 0 and {EQUIVALENCE_MARGIN_MAX}")
