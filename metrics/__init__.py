"""Pure statistics for the human-versus-model comparison; no Django, nothing else of ours."""
from ._common import as_number
from .aggregation import majority_vote, m_of_k_correct, mean_of_raters_accuracy, mean_rating_per_item
from .agreement import (
    cohen_kappa,
    cohen_kappa_by_pair,
    fleiss_kappa,
    fleiss_kappa_counts,
    krippendorff_alpha,
    landis_koch_band,
    peer_pairs,
    per_item_agreement,
    percent_agreement,
)
from .bootstrap import bootstrap_ci
from .comparison import (
    STRATIFIED,
    accuracy_with_wilson,
    classification_metrics,
    correlations,
    leave_one_out_correlations,
    mcnemar_exact,
    paired_bootstrap_gap,
    paired_bootstrap_gaps,
    stratified_interval,
)
from .ratings import bradley_terry, bradley_terry_bootstrap, elo, win_tie_lose
from .selfchat import length_stats, pass_at_n, pass_at_n_stepwise

__all__ = [
    "STRATIFIED",
    "accuracy_with_wilson",
    "as_number",
    "bootstrap_ci",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "classification_metrics",
    "cohen_kappa",
    "cohen_kappa_by_pair",
    "correlations",
    "elo",
    "fleiss_kappa",
    "fleiss_kappa_counts",
    "krippendorff_alpha",
    "landis_koch_band",
    "leave_one_out_correlations",
    "length_stats",
    "m_of_k_correct",
    "majority_vote",
    "mcnemar_exact",
    "mean_of_raters_accuracy",
    "mean_rating_per_item",
    "paired_bootstrap_gap",
    "paired_bootstrap_gaps",
    "pass_at_n",
    "pass_at_n_stepwise",
    "peer_pairs",
    "per_item_agreement",
    "percent_agreement",
    "stratified_interval",
    "win_tie_lose",
]
