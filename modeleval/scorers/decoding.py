"""How a reply is decoded: greedy, or as the model's own generation config says. Torch-free, so the forms and
settings checks that name the choices read them without loading the generator (`scorers.generation`)."""

DECODINGS = ("greedy", "model_default")
