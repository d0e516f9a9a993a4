"""Protocol presets: the settings of the published studies (PROTOCOLS.md), as starting values of a new
campaign. A manager may change any of them before the campaign is created; settings a study leaves
unstated keep the defaults of `CampaignSettings` (or a value named here as ours)."""
from dataclasses import dataclass, field
from decimal import Decimal

from .models import Aggregation, AnnotatorKind, Campaign, CampaignSettings, Policy, Protocol, Role, TieRule


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    protocol: str
    summary: str
    settings: dict = field(default_factory=dict)
    # Who labels the items (Campaign.worker_role); None: the protocol's (Campaign.worker_role_of).
    labellers: str = None

    @property
    def worker_role(self):
        return self.labellers or Campaign.worker_role_of(self.protocol)

    def values(self):
        """Every editable setting: the preset's own values over the model's defaults."""
        defaults = {name: CampaignSettings._meta.get_field(name).get_default() for name in CampaignSettings.EDITABLE}
        return {**defaults, **self.settings}


PRESETS = {preset.key: preset for preset in (
    Preset("diqad-production", "DiQAD production with QC", Protocol.PRODUCTION,
           "Every final label agreed by 2 annotators; batches of 2,000; a QC checks 100 items drawn at random and "
           "accepts only at 92% overall and 90% in every class; a rejected batch is annotated again.",
           {"overlap": 2, "batch_size": 2000, "qc_sample_size": 100, "qc_stratify": False,
            "overall_threshold": Decimal("0.92"), "class_threshold": Decimal("0.90"),
            "disagreement_policy": Policy.ADJUDICATE, "tie_rule": TieRule.NONE,
            # Not published: a reading time of ours, enforced by the server.
            "min_reading_seconds": 10, "max_rounds": 5,
            "aggregation": Aggregation.MAJORITY, "annotator_kind": AnnotatorKind.SKILLED}),
    Preset("dialogbench-baseline", "DialogBench 3-expert human baseline", Protocol.HUMAN_BASELINE,
           "50 random items per task, each answered blind by 3 experts; an item counts as correct when at least 2 "
           "of the 3 are right.",
           {"overlap": 3, "items_per_task": 50, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE,
            "min_reading_seconds": 0,
            # 2 of 3 right is the study's rule for its human figure
            "aggregation": Aggregation.MAJORITY, "annotator_kind": AnnotatorKind.EXPERT},
           labellers=Role.EXPERT),
    Preset("kodialogbench-raters", "KoDialogBench 3 raters (mean of raters)", Protocol.HUMAN_BASELINE,
           "3 native speakers each solve the same 50 random items per test set; the figure is the mean of the "
           "three accuracies, agreement is Fleiss' kappa per set.",
           {"overlap": 3, "items_per_task": 50, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE,
            "min_reading_seconds": 0, "aggregation": Aggregation.MAJORITY, "annotator_kind": AnnotatorKind.SKILLED}),
    Preset("gold-panel", "Gold panel (expert majority)", Protocol.GOLD_PANEL,
           "Experts vote; the majority becomes gold with its votes and margin; ties go to adjudication.",
           {"overlap": 3, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE,
            "aggregation": Aggregation.MAJORITY, "annotator_kind": AnnotatorKind.EXPERT}),
    Preset("botchat-arena", "BotChat arena (which conversation involves a machine)", Protocol.HUMAN_BASELINE,
           "People judge pairs of conversations blind (conversation 1, 2, both or neither); every pair of the "
           "arena is judged, by 3 people of ours.",
           {"overlap": 3, "items_per_task": None, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE}),
)}

# What each setting means, shown next to it on the settings forms (the model's help text where it has one).
MEANINGS = {
    "overlap": "k: distinct annotators per item and round (DiQAD 2, DialogBench and KoDialogBench 3).",
    "language": "The language the campaign's people work in: their pages' language unless they chose one on "
                "their account (empty: the browser's).",
    "min_reading_seconds": "Seconds an item must be open before a label is accepted; enforced by the server "
                           "from the lease.",
    "lease_minutes": "Minutes an annotator holds an item; an unanswered item goes back to the pool after that.",
    "batch_size": "Items per batch, the unit that is handed in and checked by QC (DiQAD: 2,000).",
    "qc_sample_size": "Items the QC draws at random (seeded) from a handed-in batch and labels again (DiQAD: 100).",
    "qc_stratify": "Draw the QC sample proportionally per final label instead of uniformly.",
    "overall_threshold": "Accept a batch only when the QC agrees with at least this share of the sample "
                         "(0 to 1; DiQAD: 0.92).",
    "class_threshold": "... and with at least this share within every class, class = the QC's label "
                       "(0 to 1; DiQAD: 0.90).",
    "max_rounds": "Rounds a batch may go through QC; after the last rejection a manager must reopen it.",
    "disagreement_policy": "What happens when the k labels of an item differ on the primary question.",
    "tie_rule": "For the majority policy: where a tied vote goes.",
    "max_extra_annotators": "For the extra-annotator policy: how many more annotators an item may get.",
    "items_per_task": "A seeded sample of this many items per task (human baselines: 50); empty = every item.",
    "seed": "Seeds the batch order, the samples and random tie breaks, so that a campaign can be repeated.",
    "guidelines": "Markdown shown to every member from the workspace (the ? key); a change after work started "
                  "makes a new version.",
    "guidelines_by_language": "Shown instead of the guidelines above to a person whose pages are in that "
                              "language (Markdown); empty: the guidelines above.",
    "aggregation": "How the report turns an item's labels into the crowd's one label: majority vote (a study's "
                   "own rule, e.g. DialogBench's 2 of 3), or an annotator model fitted to every label of the "
                   "campaign (Dawid-Skene, one-coin, MACE) that weighs each person by their estimated competence. "
                   "The model also gives each annotator's competence (QC and batch pages) and each item's "
                   "uncertainty (experts' page), whichever rule is chosen (Dawid-Skene under majority vote).",
    "selection_mode": "Which items people label: every item of the campaign (cut in a seeded order), or active "
                      "selection: items drawn once, each with a probability that grows with the judge run's "
                      "uncertainty about it, mixed with uniform; the report weights each labelled item by its "
                      "probability, so estimates stay unbiased. Batches, leases, QC and rounds work as usual.",
    "active_budget": "Active selection: how many items are drawn for people to label, on average.",
    "active_uniform_share": "Active selection: the share of the draw that is uniform (0 to 1); above 0 every item "
                            "can be drawn, which the weighted estimate needs (e.g. 0.2).",
    "active_judge_run": "Active selection: the model run (rating, yes/no or log-likelihood, on this benchmark) whose "
                        "uncertainty draws the items.",
    "annotator_kind": "Who the annotators are: the alternative annotator test lets a judge replace them when it "
                      "wins against most of them, giving away epsilon = 0.1 (crowd), 0.15 (skilled) or "
                      "0.2 (experts) for being cheaper.",
}


def meaning(name):
    model_field = CampaignSettings._meta.get_field(name)
    return MEANINGS.get(name) or str(model_field.help_text or model_field.verbose_name)
