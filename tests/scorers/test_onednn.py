"""The packaged model's linear layers run through oneDNN on CPU (modeleval.scorers.onednn) with the arithmetic of
torch's default: the same logits, the same log-likelihoods."""
import pytest
import torch

from modeleval.scorers import onednn
from modeleval.scorers.loading import load_model
from modeleval.scorers.loglikelihood import score_shared_context
from tests.scorers.dialogues import mc_items
from tests.scorers.support import require_packaged_model
from tests.scorers.test_loglikelihood import extra_items

require_packaged_model()

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(not onednn.available(), reason="this torch has no oneDNN linear op")]


def test_the_swapped_layers_give_torchs_logits(smol, monkeypatch):
    monkeypatch.setenv("HB_ONEDNN_LINEAR", "0")
    stock = load_model(cache_dir=smol.cache_dir).model
    assert not any(isinstance(m, onednn.OneDnnLinear) for m in stock.modules())
    swapped = [m for m in smol.model.modules() if isinstance(m, onednn.OneDnnLinear)]
    assert len(swapped) == 7 * smol.model.config.num_hidden_layers  # q, k, v, o, gate, up, down
    assert not isinstance(smol.model.lm_head, onednn.OneDnnLinear)  # tied to the embedding, applied to few rows

    ids = smol.tokenizer("A: Where did you park?\nB: Behind the station, next to the bakery.",
                         return_tensors="pt").input_ids
    with torch.inference_mode():
        ours, theirs = smol.model(input_ids=ids).logits, stock(input_ids=ids).logits
        # A batch of two rows with padding goes through the same layers (three-dimensional input).
        batch = smol.model(input_ids=ids.repeat(2, 1)).logits
    assert (ours - theirs).abs().max().item() < 1e-3
    assert torch.equal(batch[0], batch[1]) and (batch[0] - ours[0]).abs().max().item() < 1e-4


def test_log_likelihoods_agree_with_the_default_layers(smol, monkeypatch):
    monkeypatch.setenv("HB_ONEDNN_LINEAR", "0")
    stock = load_model(cache_dir=smol.cache_dir).model
    items = mc_items() + extra_items()
    ours = score_shared_context(smol.model, smol.tokenizer, items)
    theirs = score_shared_context(stock, smol.tokenizer, items)
    for a, b in zip(ours, theirs, strict=True):
        assert a.picks == b.picks
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-3
