"""Linear layers through oneDNN on CPU: the matrix products that are nearly all of a float32 forward pass.

torch hands a float32 linear layer to MKL, which takes its AVX-512 kernels on Intel processors only. On
this project's AMD machine oneDNN's kernels make a whole forward pass of the packaged model 17 % faster
(perf/RESULTS.md), with the same float32 arithmetic (logits within 1e-4 of torch's default).
"""
from __future__ import annotations

import os

import torch


class OneDnnLinear(torch.nn.Module):
    """A float32 linear layer whose weights are packed once in oneDNN's layout, taking and giving plain
    tensors (the op torch's own compiler emits for CPU linear layers); inference only (no gradient)."""

    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), None)
        # A copy of its own: a view of a bias mapped from the checkpoint file would keep the whole mapping resident.
        self.bias_values = None if linear.bias is None else linear.bias.detach().clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias_values, "none", [], "")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, oneDNN"


def available() -> bool:
    """Whether use_onednn_linears will swap anything: HB_ONEDNN_LINEAR=0, or a torch without oneDNN, keeps
    torch's default."""
    return (os.environ.get("HB_ONEDNN_LINEAR", "1") != "0" and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_linear_pointwise"))


def use_onednn_linears(model) -> int:
    """Swap the float32 linear layers of the model's body for OneDnnLinear; returns how many.

    The output projection stays as it is: it shares its weights with the embedding, and the scorers
    apply it to a few rows only. The weights left as they are get memory of their own: while any of them is a view
    of the checkpoint file mapped into memory, the whole mapping (about the model's size) stays resident beside
    the packed copies.
    """
    if not available():
        return 0
    body = getattr(model, "model", None)
    if body is None:
        return 0
    swapped = 0
    for module in list(body.modules()):
        for name, child in list(module.named_children()):
            if type(child) is torch.nn.Linear and child.weight.dtype == torch.float32:
                setattr(module, name, OneDnnLinear(child))
                swapped += 1
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            tensor.data = tensor.data.clone()
    return swapped
