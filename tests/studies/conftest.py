# The studies' tests run their presets through the house: the packaged model, the scorers' loaded session.
from tests.modeleval.conftest import packaged, require_model  # noqa: F401  (fixtures)
from tests.scorers.conftest import model_cache_dir, smol  # noqa: F401  (fixtures)
