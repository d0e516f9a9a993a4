"""A chunk's items scored on the worker: the run's model loaded, asked what its mode family
(`modeleval.modes`) asks, and the answers turned into Prediction field values.

This module imports torch (through the scorers) and is imported only by the process that scores,
on first use: a Celery parent process never loads it, so CUDA is never initialised before the
pool forks.
"""
from __future__ import annotations

from django.conf import settings

from .models import ModelSpec
from .modes import api_refusal, family
from .scorers import classifier, generation, loading, loglikelihood, next_word, prompts


class PermanentError(Exception):
    """No retry can help (the weights on this machine are not the ones registered)."""


def load(spec: ModelSpec):
    """The spec's model, loaded once per process and kept for every later chunk; for a model behind
    an API, a client (`apiscoring.ApiModel`) that records the requests of this chunk."""
    if spec.is_api:
        from .apiscoring import ApiModel
        from .errors import RunError

        try:
            return ApiModel(spec)
        except RunError as refused:  # the endpoint or the key's variable is no longer allowed
            raise PermanentError(f"model {spec.name}: {refused}") from None
    if spec.trained_by_id:
        return _classifier(spec)
    loaded = loading.get_model(spec.source, cache_dir=settings.MODEL_CACHE_DIR, dtype=spec.dtype, device=spec.device)
    if loaded.info.sha256 != spec.sha256:
        raise PermanentError(f"model {spec.name}: {loaded.info.source} has sha256 {loaded.info.sha256}, "
                             f"registered as {spec.sha256}; register the new files as a new model")
    return loaded


_classifiers: dict = {}


def _classifier(spec: ModelSpec):
    """A classifier trained here, loaded once per process, its folder checked against the registered hash."""
    key = (spec.source, spec.sha256)
    if key not in _classifiers:
        sha = loading.folder_sha256(loading.resolve_source(spec.source))
        if sha != spec.sha256:
            raise PermanentError(f"model {spec.name}: {spec.source} has sha256 {sha}, registered as {spec.sha256}")
        _classifiers[key] = classifier.load_classifier(spec.source)
    return _classifiers[key]


def score_items(run, items) -> list[dict]:
    """Prediction fields (item, variant, options, answer, ...) for each item and option order.
    Prompts are built before the model loads, so a malformed item fails fast."""
    scorer = family(run.mode)
    if run.model.is_api and (refused := api_refusal(run.model.capabilities, run.mode, run.settings)):
        raise PermanentError(f"model {run.model.name}: {refused}")
    requests = scorer.requests(run, items)
    if not requests:
        return []
    loaded = load(run.model)
    rows = scorer.score(run, ModelCalls(run, loaded), requests)
    if run.model.is_api:
        for row in rows:
            row["api_calls"] = loaded.calls_for(row)
    return rows


def chat_text(tokenizer, spec: ModelSpec, user, system: str = "") -> str:
    """The prompt as the model reads it: in the chat template (the spec's own text when set, else the
    tokenizer's), or plain when the spec or tokenizer has none. `user` is one user message's text, or a chat
    as (role, content) pairs ending with the user's turn, which only a chat template can render."""
    template = spec.chat_template or None
    if not spec.use_chat_template or not (template or prompts.has_chat_template(tokenizer)):
        if isinstance(user, str):
            return user
        raise ValueError(f"model {spec.name}: a prompt of several chat turns needs the model's chat template, and "
                         "it is read without one")
    return prompts.render_chat(tokenizer, prompts.with_system(system, prompts.chat_messages(user)), template)


class ModelCalls:
    """The run's model as a mode family asks it, the same for a checkpoint in this process and for a
    model behind an API (`apiscoring.ApiModel`), with the run's settings (system prompt, reply
    length, batch size) applied."""

    def __init__(self, run, loaded):
        self.run, self.loaded = run, loaded
        size = run.settings.get("batch_size")
        # batch_size only when the run sets one, so that each scorer keeps its own device default.
        self.batch = {} if size is None else {"batch_size": size}

    def replies(self, users, *, render=None, request=None):
        """({user prompt: the text the model reads}, {that text: greedy reply}); each distinct text is
        generated once. A user prompt is one message's text or a chat of (role, content) pairs. A model
        behind an API reads the messages themselves (its server applies the chat template, and the system
        prompt goes in the request, with `request`'s fields); their text is then the prompt as `prompts.prompt_text`
        shows it. A checkpoint reads it in its chat template, or as `render(tokenizer, user)` gives it: (text,
        whether the tokenizer adds its special tokens to it)."""
        s, loaded = self.run.settings, self.loaded
        if self.run.model.is_api:
            replies = loaded.chat(list(users), system=s["system"], max_new_tokens=s["max_new_tokens"],
                                  **(request or {}))
            return {user: prompts.prompt_text(user) for user in users}, replies
        special = False
        if render is None:
            texts = {user: chat_text(loaded.tokenizer, self.run.model, user, s["system"]) for user in users}
        else:
            rendered = {user: render(loaded.tokenizer, user) for user in users}
            texts = {user: text for user, (text, _) in rendered.items()}
            special = any(flag for _, flag in rendered.values())
        unique = list(dict.fromkeys(texts.values()))
        replies = dict(zip(unique, generation.generate(loaded.model, loaded.tokenizer, unique,
                                                       max_new_tokens=s["max_new_tokens"], chat=False,
                                                       add_special_tokens=special, **self.batch)
                           if unique else [], strict=True))
        return texts, replies

    def word_probs(self, texts, words):
        """For each text, the probability that each word comes next (`scorers.next_word`)."""
        if self.run.model.is_api:
            return self.loaded.word_probs(list(texts), words)
        return next_word.word_probs(self.loaded.model, self.loaded.tokenizer, texts, words, **self.batch)

    def option_scores(self, asked, cap=None):
        """Each option's log-likelihood after its context (`scorers.loglikelihood`), for requests of
        (context, options, delimiter, add_special_tokens); `cap` shortens the model's input length."""
        loaded = self.loaded
        max_length = self.run.model.max_length
        if cap is not None:
            max_length = min(loglikelihood.max_length_of(loaded.model, loaded.tokenizer, max_length), cap)
        items = [loglikelihood.MCItem(context, tuple(options), delimiter=delimiter, add_special_tokens=special)
                 for context, options, delimiter, special in asked]
        return loglikelihood.score_shared_context(loaded.model, loaded.tokenizer, items, max_length=max_length,
                                                  **self.batch)

    def class_probs(self, texts):
        """(class labels, each text's probability of each class) from a classifier trained here."""
        model, tokenizer = self.loaded
        labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
        return labels, classifier.predict(model, tokenizer, texts, max_length=self.run.model.max_length,
                                          **self.batch)
