from tests.modeleval.conftest import packaged, require_model  # noqa: F401  (fixtures shared with model runs)
