"""What an item's labels add up to, once all of a round's labels are in (pure: no database)."""
from dataclasses import dataclass

from metrics.aggregation import majority_vote

from .models import ItemStatus, Policy, Protocol


@dataclass(frozen=True)
class Outcome:
    status: str  # ItemStatus
    value: object = None
    method: str = ""  # agreement | majority | extra_annotator | excluded | baseline | adjudicated
    disagreement: bool = False  # record a Disagreement for trainers
    add_slot: bool = False  # extra_annotator: one more lease for this item
    votes: dict | None = None
    margin: int = 0


def item_outcome(values, excluded, *, protocol, policy, tie_rule, seed, extra_used, max_extra):
    """values: the primary answers of this round (in submission order); excluded: per answer, whether it
    takes the item out. Exclusion codes are primary values like any other: annotators must agree on them.
    """
    if excluded and all(excluded):
        vote = majority_vote(values, tie_rule="first")
        return Outcome(ItemStatus.EXCLUDED, vote.label, "excluded", votes=vote.votes, margin=vote.margin)
    vote = majority_vote(values, tie_rule="none")
    if protocol == Protocol.HUMAN_BASELINE:
        # Raters answer blind and every answer is scored; nobody resolves anything.
        return Outcome(ItemStatus.LABELLED, vote.label, "baseline", votes=vote.votes, margin=vote.margin)
    if len(vote.votes) == 1:
        return Outcome(ItemStatus.LABELLED, vote.label, "agreement", votes=vote.votes, margin=vote.margin)
    if protocol == Protocol.GOLD_PANEL:
        policy, tie_rule = Policy.MAJORITY, "none"  # a panel's majority is the gold; ties go to adjudication
    if policy == Policy.EXTRA_ANNOTATOR and extra_used < max_extra:
        return Outcome(ItemStatus.PENDING, None, "extra_annotator", disagreement=True, add_slot=True, votes=vote.votes)
    if policy in (Policy.MAJORITY, Policy.EXTRA_ANNOTATOR):
        rule = tie_rule if policy == Policy.MAJORITY else "none"
        decided = majority_vote(values, tie_rule=rule, seed=seed)
        if decided.label is not None:
            method = "extra_annotator" if extra_used else "majority"
            return Outcome(ItemStatus.LABELLED, decided.label, method, disagreement=True,
                           votes=decided.votes, margin=decided.margin)
    return Outcome(ItemStatus.DISAGREEMENT, None, "", disagreement=True, votes=vote.votes)
