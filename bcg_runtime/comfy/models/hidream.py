"""HiDream-I1 full / dev / fast (``comfy.ldm.hidream.model.HiDreamImageTransformer2DModel``;
``model_base.HiDream``): NOT supported. BCG Apply leaves the model unchanged ("unsupported model
HiDream"). This module defines no ``ADAPTER`` and no ``RECIPE`` on purpose, so it is no family.

Why. Every image-stream feed-forward of every block is a mixture of experts that routes tokens by
value: ``MOEFeedForwardSwiGLU.forward`` picks each token's top 2 of 4 experts and indexes with a
boolean mask, so the mask becomes indices through a device-to-host sync (``nonzero``) and each
expert's matmul has a value-dependent shape. A CUDA graph cannot capture that (the sync is illegal
during capture), and a graph frozen on one routing would compute another input's tokens with the
wrong experts: a wrong image. Detection fixes 4 routed experts for every HiDream checkpoint, so a
per-call ``refusal`` would send every call eager while claiming support. Mode breakable does not
help: its only break is attention, and nothing breaks the graph around the MoE. File and line
references: tests/comfy/test_hidream.py.
"""

#: ``comfy.supported_models`` class names of this family (for the tests' refusal check).
CONFIG_CLASSES = ("HiDream",)
#: Why the family is unsupported, in one line (the module docstring has the details).
UNSUPPORTED_REASON = (
    "HiDream's mixture-of-experts routes tokens by value (boolean-mask indexing with a host sync and "
    "value-dependent shapes in every block), which no graph can replay and no BCG break covers"
)
