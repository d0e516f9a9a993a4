import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

# Nothing in these tests may reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@dataclass(frozen=True)
class Session:
    model: object
    tokenizer: object
    info: object
    cache_dir: Path
    seconds: float  # the session's first load, conversion included on a cold cache


@pytest.fixture(scope="session")
def model_cache_dir(tmp_path_factory) -> Path:
    """HB_MODEL_CACHE when set, so repeated runs reuse the converted weights."""
    configured = os.environ.get("HB_MODEL_CACHE")
    return Path(configured) if configured else tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def smol(model_cache_dir) -> Session:
    from modeleval.scorers.loading import get_model

    start = time.perf_counter()
    model, tokenizer, info = get_model(cache_dir=model_cache_dir)
    return Session(model, tokenizer, info, model_cache_dir, time.perf_counter() - start)
