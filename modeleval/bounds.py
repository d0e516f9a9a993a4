"""The bounds of every number a run takes, per kind of run, checked where that kind's settings are validated.

Wide enough for every protocol reproduced here (BotChat: self-chats of 16 utterances of up to 512 new tokens,
judges of 256; DialogBench: 128 new tokens; DiQAD's classifier: batches of 16 for 10 epochs; Huynh et al.: 3
examples over 5 seeds) with room to vary them, and narrow enough that one request cannot hold a worker for
days or fill its memory (a self-chat of 10^9 utterances, 10^9 new tokens per reply).
"""
from __future__ import annotations

from collections.abc import Mapping

from core.errors import Code

from .errors import RunError

# EvalRun.seed is a 32-bit integer column.
SEED = (0, 2**31 - 1)

# start_run, start_training, start_selfchat: the run itself.
RUN = {"limit": (1, 1_000_000), "chunk_size": (1, 10_000), "max_attempts": (1, 20), "seed": SEED}
# The settings of a scoring run (modes.resolve_settings); "fewshot.k" is fewshot's k.
SCORING = {"batch_size": (1, 1024), "max_new_tokens": (1, 4096), "top_k": (1, 20), "fewshot.k": (0, 32)}
SCORING_SEEDS = 20  # rating's repeated few-shot draws (Huynh et al.: 5)
# A self-chat run (selfchat_runs.resolve_settings).
SELFCHAT = {"utterances": (3, 64), "max_new_tokens": (1, 2048), "batch_size": (1, 1024), "limit": (1, 100_000)}
# A training run (training.resolve).
TRAINING = {"learning_rate": (1e-9, 1.0), "batch_size": (1, 1024), "max_grad_norm": (1e-6, 1000.0),
            "epochs": (1, 100), "weight_decay": (0.0, 1.0), "max_length": (1, 32_768), "layers": (1, 256),
            "steps_per_chunk": (1, 10_000)}
# Arena pairs (arena.make_pairs).
ARENA = {"min_source_utterances": (1, 64), "seed": SEED}


def _value(values: Mapping, name: str):
    for part in name.split("."):
        if not isinstance(values, Mapping):
            return None
        values = values.get(part)
    return values


def check(values: Mapping, table: Mapping[str, tuple]) -> None:
    """RunError(Code.BAD_SETTINGS) naming the first value outside its bounds; a value left out (None) is not
    checked here. Integer bounds want an integer, float bounds any number."""
    for name, (low, high) in table.items():
        value = _value(values, name)
        if value is None:
            continue
        whole = isinstance(low, int) and isinstance(high, int)
        kinds = int if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            raise RunError(Code.BAD_SETTINGS, f"{name} must be {'an integer' if whole else 'a number'} from {low} "
                                              f"to {high}, got {value!r}")


def check_seeds(seeds) -> None:
    """Rating's list of few-shot seeds: at most SCORING_SEEDS, each a seed."""
    if isinstance(seeds, list) and len(seeds) > SCORING_SEEDS:
        raise RunError(Code.BAD_SETTINGS, f"seeds: at most {SCORING_SEEDS}, got {len(seeds)}")
    for seed in seeds if isinstance(seeds, list) else ():
        check({"seeds": seed}, {"seeds": SEED})
