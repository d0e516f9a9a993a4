"""deploy/gunicorn.conf.py as gunicorn reads it: worker recycling is spread, so that the workers, which share the
load evenly, do not all restart at the same moment."""
import runpy

import pytest

from tests.conftest import ROOT

CONFIG = ROOT / "deploy" / "gunicorn.conf.py"


def load(monkeypatch, **env):
    for name in ("GUNICORN_MAX_REQUESTS", "GUNICORN_MAX_REQUESTS_JITTER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONFIG))


@pytest.mark.parametrize("max_requests", [None, "1000", "20000"])
def test_recycling_is_spread_over_a_tenth_to_a_quarter_of_the_limit(monkeypatch, max_requests):
    config = load(monkeypatch, **({"GUNICORN_MAX_REQUESTS": max_requests} if max_requests else {}))
    assert config["max_requests"] > 0
    assert config["max_requests_jitter"] > 0
    assert 0.1 <= config["max_requests_jitter"] / config["max_requests"] <= 0.25, config["max_requests_jitter"]


def test_gunicorn_reads_the_jitter_from_the_file(monkeypatch):
    """gunicorn's own loader takes the value (a misspelt name would be ignored by it, and by runpy)."""
    from gunicorn.config import Config

    for name in ("GUNICORN_MAX_REQUESTS", "GUNICORN_MAX_REQUESTS_JITTER"):
        monkeypatch.delenv(name, raising=False)
    config = Config()
    for name, value in runpy.run_path(str(CONFIG)).items():
        if name in config.settings:
            config.set(name, value)
    assert config.max_requests == 5000
    assert config.max_requests_jitter == 1250


def test_recycling_off_and_explicit_jitter(monkeypatch):
    assert load(monkeypatch, GUNICORN_MAX_REQUESTS="0")["max_requests"] == 0
    assert load(monkeypatch, GUNICORN_MAX_REQUESTS_JITTER="7")["max_requests_jitter"] == 7
