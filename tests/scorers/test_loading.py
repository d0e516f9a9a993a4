import threading
from pathlib import Path

import pytest
import torch

from modeleval.scorers import loading

from .support import require_packaged_model

require_packaged_model()
pytestmark = pytest.mark.model


def test_packaged_path_is_the_wheel_gguf():
    path = loading.packaged_model_path()
    assert path.name == loading.PACKAGED_FILE and path.is_file()
    assert path.parent.name == loading.PACKAGED_MODULE


def test_info_describes_the_load(smol):
    info = smol.info
    assert info.source == str(loading.packaged_model_path())
    assert len(info.sha256) == 64 and info.sha256 == loading.file_sha256(info.source)
    assert Path(info.loaded_from) == smol.cache_dir / info.sha256[:16]
    assert (info.dtype, info.device) == ("float32", "cpu")
    assert info.max_length == 8192  # max_position_embeddings, as HFLM reads it
    assert info.has_chat_template
    assert smol.model.dtype == torch.float32 and not smol.model.training


def test_cache_holds_one_complete_conversion(smol):
    key = smol.info.sha256[:16]
    names = [p.name for p in smol.cache_dir.iterdir() if key in p.name]
    assert names == [key], "one folder, no temporary leftovers"
    files = {p.name for p in (smol.cache_dir / key).iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "source.json"} <= files


def test_second_load_comes_from_the_cache(smol):
    # A cached load reads the converted folder and never converts again; how long
    # it takes is measured in perf/, not asserted here.
    model, tokenizer, info = loading.load_model(cache_dir=smol.cache_dir)
    assert not info.converted and info.loaded_from == smol.info.loaded_from
    ids = tokenizer("Speaker 1: hello there", return_tensors="pt").input_ids
    with torch.inference_mode():
        assert torch.equal(model(ids).logits, smol.model(ids).logits)


def test_get_model_loads_once_per_process(smol):
    assert loading.get_model(cache_dir=smol.cache_dir).model is smol.model


def test_cpu_load_leaves_cuda_alone(smol):
    assert not torch.cuda.is_initialized()


def test_save_atomically_under_a_race(tmp_path):
    target = tmp_path / "abc"
    started = threading.Barrier(4)
    results = []

    def write(folder):
        started.wait()
        (folder / "config.json").write_text("{}")
        (folder / "weights").write_bytes(b"x" * 100_000)

    threads = [
        threading.Thread(target=lambda: results.append(loading.save_atomically(target, write))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["abc"]
    assert (target / "weights").stat().st_size == 100_000
