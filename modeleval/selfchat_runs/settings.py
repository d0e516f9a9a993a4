"""A self-chat run's settings: ours, or a preset's (the study's), with every setting given on top; the version of
the system prompt they name."""
from __future__ import annotations

import studies
from core.errors import Code
from studies.botchat.recipe import SEED_UTTERANCES
from studies.vocabulary import DECODINGS

from .. import bounds
from ..actions import RunError
from ..models import Mode
from ..scorers import loops, selfchat_generation
from ..scorers.prompts import template_hash

# The studies' self-chat recipes (studies.recipes.SelfChat), by preset.
_RECIPES = {study.preset: study.recipes[Mode.SELFCHAT] for study in studies.each() if Mode.SELFCHAT in study.recipes}
# System prompt text -> its version (change the text, change the version); any other text is "custom".
PROMPT_VERSIONS = {selfchat_generation.DEFAULT_SYSTEM_PROMPT: "selfchat-system-en/1",
                   **{r.settings["system_prompt"]: r.prompt_version for r in _RECIPES.values()}}
DEFAULTS = {"utterances": selfchat_generation.DEFAULT_UTTERANCES,
            "system_prompt": selfchat_generation.DEFAULT_SYSTEM_PROMPT,
            "max_new_tokens": selfchat_generation.DEFAULT_MAX_NEW_TOKENS,
            "decoding": selfchat_generation.DEFAULT_DECODING,
            "reply_cut": selfchat_generation.DEFAULT_REPLY_CUT}
PRESETS = {preset: recipe.settings for preset, recipe in _RECIPES.items()}
API_PRESETS = {preset: recipe.api_settings for preset, recipe in _RECIPES.items()}  # over PRESETS behind an API
# What the runs page offers beside them.
CHOICES = {"decodings": DECODINGS, "reply_cuts": selfchat_generation.REPLY_CUTS,
           "similarities": sorted(loops.SIMILARITIES), "loop_similarity": loops.DEFAULT_SIMILARITY,
           "loop_threshold": loops.DEFAULT_THRESHOLD}


def resolve_settings(*, preset="", utterances=None, system_prompt=None, max_new_tokens=None, decoding=None,
                     reply_cut=None, similarity=loops.DEFAULT_SIMILARITY, threshold=loops.DEFAULT_THRESHOLD,
                     batch_size=32, seed=0, api=False):
    """The run's settings: ours, or the preset's (its settings for models behind an API when `api`), with every
    setting given (not None) on top."""
    if preset and studies.recipe({"preset": preset}, Mode.SELFCHAT) is None:
        raise RunError(Code.BAD_SETTINGS, f"unknown self-chat preset {preset!r}; expected one of {sorted(PRESETS)}")
    given = {"utterances": utterances, "system_prompt": system_prompt, "max_new_tokens": max_new_tokens,
             "decoding": decoding, "reply_cut": reply_cut}
    preset_settings = {**PRESETS.get(preset, {}), **(API_PRESETS.get(preset, {}) if api else {})}
    chosen = {**DEFAULTS, **preset_settings, **{k: v for k, v in given.items() if v is not None}}
    if api and chosen["decoding"] != "greedy":
        raise RunError(Code.BAD_SETTINGS, "a model behind an API self-chats greedily (temperature 0): decoding must be "
                                       f"\"greedy\", not {chosen['decoding']!r}")
    # utterances from 3: one more than the seed's two (SEED_UTTERANCES).
    bounds.check({**chosen, "batch_size": batch_size, "seed": seed}, {**bounds.SELFCHAT, "seed": bounds.SEED})
    if chosen["decoding"] not in DECODINGS or chosen["reply_cut"] not in selfchat_generation.REPLY_CUTS:
        raise RunError(Code.BAD_SETTINGS, f"decoding must be one of {DECODINGS} and reply_cut one of "
                                       f"{selfchat_generation.REPLY_CUTS}")
    if similarity not in loops.SIMILARITIES or not 0 < threshold <= 1:
        raise RunError(Code.BAD_SETTINGS, f"loop similarity must be one of {sorted(loops.SIMILARITIES)} "
                                       "and its threshold in (0, 1]")
    return {**chosen, "preset": preset, "backend": "api" if api else "local", "seed_utterances": SEED_UTTERANCES,
            "system_prompt_sha256": template_hash(chosen["system_prompt"]), "loop_similarity": similarity,
            "loop_threshold": threshold, "batch_size": batch_size, "seed": seed}
