"""Protocol presets: the settings of the published studies (PROTOCOLS.md), as starting values of a new
campaign. A manager may change any of them before the campaign is created; settings a study leaves
unstated keep the defaults of `CampaignSettings` (or a value named here as ours)."""
from dataclasses import dataclass, field
from decimal import Decimal

from .models import CampaignSettings, Policy, Protocol, TieRule


@dataclass(frozen=True)
class Preset:
    key: str
    name: str
    protocol: str
    summary: str
    settings: dict = field(default_factory=dict)

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
            "min_reading_seconds": 10, "max_rounds": 5}),
    Preset("dialogbench-baseline", "DialogBench 3-expert human baseline", Protocol.HUMAN_BASELINE,
           "50 random items per task, each answered blind by 3 experts; an item counts as correct when at least 2 "
           "of the 3 are right.",
           {"overlap": 3, "items_per_task": 50, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE,
            "min_reading_seconds": 0}),
    Preset("kodialogbench-raters", "KoDialogBench 3 raters (mean of raters)", Protocol.HUMAN_BASELINE,
           "3 native speakers each solve the same 50 random items per test set; the figure is the mean of the "
           "three accuracies, agreement is Fleiss' kappa per set.",
           {"overlap": 3, "items_per_task": 50, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE,
            "min_reading_seconds": 0}),
    Preset("gold-panel", "Gold panel (expert majority)", Protocol.GOLD_PANEL,
           "Experts vote; the majority becomes gold with its votes and margin; ties go to adjudication.",
           {"overlap": 3, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE}),
    Preset("botchat-arena", "BotChat arena (which conversation involves a machine)", Protocol.HUMAN_BASELINE,
           "People judge pairs of conversations blind (conversation 1, 2, both or neither); every pair of the "
           "arena is judged, by 3 people of ours.",
           {"overlap": 3, "items_per_task": None, "disagreement_policy": Policy.MAJORITY, "tie_rule": TieRule.NONE}),
)}

# What each setting means, shown next to it on the settings forms (the model's help text where it has one).
MEANINGS = {
    "overlap": "k: distinct annotators per item and round (DiQAD 2, DialogBench and KoDialogBench 3).",
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
}


def meaning(name):
    model_field = CampaignSettings._meta.get_field(name)
    return MEANINGS.get(name) or str(model_field.help_text or model_field.verbose_name)
