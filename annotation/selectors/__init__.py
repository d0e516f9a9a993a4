"""Reads shared by the API, the pages, the reports and the actions.

One module per job: progress (batch and campaign counts, the hand-in offer), leases (what a labeller's page
shows), review (disagreements, flags, the QC sample), gold (which gold scores whom), scores (the human baseline,
annotator models, accepted and imported labels), home (what waits for a person, their pages' language).
Callers use the names re-exported here: `from annotation import selectors; selectors.lease_view(...)`.
"""
from .gold import circular_gold, gold_is_derived
from .home import campaign_invitations, campaign_language, pending_invitations, waiting_for
from .leases import (
                       LEASE_RELATIONS,
                       item_view,
                       last_answer,
                       last_answer_view,
                       lease_view,
                       live_lease_and_first_batch,
                       open_lease,
                       qc_feedback,
                       seconds_until_submit_allowed,
)
from .progress import (
                       active_draw_view,
                       batch_progress,
                       batches_overview,
                       campaign_progress,
                       hand_in_requests,
                       labeller_handed_in_state,
                       labeller_progress,
                       labeller_view,
                       left_for,
                       worker_progress,
)
from .review import (
                       blind_qc_sample,
                       campaign_disagreements,
                       campaign_flags,
                       disagreement_answers,
                       disagreements_by_guideline,
                       flag_views,
                       qc_figures,
)
from .scores import (
                       accepted_final_labels,
                       annotator_estimates,
                       baseline_scores,
                       current_annotations,
                       has_imported_ratings,
                       imported_ratings,
)

__all__ = [
    "pending_invitations",
    "campaign_invitations",
    "active_draw_view",
    "batch_progress",
    "campaign_progress",
    "labeller_progress",
    "batches_overview",
    "left_for",
    "worker_progress",
    "labeller_view",
    "labeller_handed_in_state",
    "hand_in_requests",
    "seconds_until_submit_allowed",
    "item_view",
    "LEASE_RELATIONS",
    "lease_view",
    "live_lease_and_first_batch",
    "open_lease",
    "qc_feedback",
    "last_answer",
    "last_answer_view",
    "campaign_disagreements",
    "disagreements_by_guideline",
    "disagreement_answers",
    "qc_figures",
    "blind_qc_sample",
    "campaign_flags",
    "flag_views",
    "gold_is_derived",
    "circular_gold",
    "current_annotations",
    "baseline_scores",
    "accepted_final_labels",
    "imported_ratings",
    "has_imported_ratings",
    "annotator_estimates",
    "waiting_for",
    "campaign_language",
]
