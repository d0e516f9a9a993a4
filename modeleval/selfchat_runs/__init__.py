"""Self-chat runs (BotChat): a registered model continues human chat seeds, and the dialogues it
writes become items to be judged.

`start_selfchat` checks the settings and the seeds (a MuTual-shaped file, or the real dialogues of a
MuTual import already in the database), and writes the run at once, queued, with its benchmark
`selfchat-<model>-<run id>` and task `selfchat` (no items yet); on commit the generation goes to the
`gpu` queue (`tasks.generate_selfchat`), or `run_selfchat` does it in this process. `generate` takes
the run (running), continues the seeds step by step outside any transaction (minutes on a CPU),
counting the steps as the run's chunks (`chunks_done` of `chunks_total`, one step is one utterance
more for every dialogue), then one transaction writes one item per dialogue and one prediction per
seed and finishes the run: `raw_output` is the dialogue as JSON ({"utterances", "loop_start"}),
`options` holds each generated utterance's step ({index, prompt, dropped, reply, text}: the exact
prompt, the oldest turns left out of it, the decoded reply and the utterance kept), `answer` is "loop"
or "no_loop". Each item's meta keeps the token count of every utterance under the run model's tokenizer
(`utterance_tokens`). A failure writes no items: the run is failed with the reason, its benchmark stays
empty. Delivery is at least once: a delivery that finds the run running (its worker died) generates
again, up to the run's `max_attempts`; the first to finish writes, a later one (or one of a cancelled
run) writes nothing.

Settings default to ours (greedy, a short reply cut at its first newline); `preset="botchat"` takes the
study's (`studies.botchat.recipe.SELFCHAT_SETTINGS`; for a model behind an API `SELFCHAT_API_SETTINGS`, as its gpt.py
ran GPT-4, GPT-3.5 and Claude), and any setting given explicitly wins over either. A model behind an API is asked
through its chat endpoint on the `cpu` queue (greedy only: temperature 0), each request cached as any API call.
Nothing here imports torch at import time (the web process queues runs); `generate` loads the model.

One module per job: settings (ours, the presets, `resolve_settings`), seeds (from a file or a MuTual import, the
run's selection), start (`start_selfchat`, `enqueue_selfchat`, `run_selfchat`), generation (one delivery:
`generate`), store (the run and its benchmark, the items and predictions written, `_record`).
Callers use the names re-exported here: `from modeleval import selfchat_runs; selfchat_runs.start_selfchat(...)`.
"""
from .generation import SELFCHAT_MODES, generate
from .seeds import benchmark_seeds, read_seeds, seed_benchmarks
from .settings import API_PRESETS, CHOICES, DEFAULTS, PRESETS, PROMPT_VERSIONS, resolve_settings
from .start import SELFCHAT_TASK, enqueue_selfchat, run_selfchat, start_selfchat
from .store import TASK_SLUG

__all__ = [
    "PROMPT_VERSIONS",
    "DEFAULTS",
    "PRESETS",
    "API_PRESETS",
    "CHOICES",
    "resolve_settings",
    "read_seeds",
    "seed_benchmarks",
    "benchmark_seeds",
    "TASK_SLUG",
    "SELFCHAT_MODES",
    "generate",
    "start_selfchat",
    "SELFCHAT_TASK",
    "enqueue_selfchat",
    "run_selfchat",
]
