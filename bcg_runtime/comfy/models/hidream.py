"""HiDream-I1 full / dev / fast (``comfy.ldm.hidream.model.HiDreamImageTransformer2DModel``;
``model_base.HiDream``): NOT supported. BCG Apply leaves the model unchanged ("unsupported model
HiDream"). This module defines no ``ADAPTER`` and no ``RECIPE`` on purpose, so it is no family.

Why. Every image-stream feed-forward of every block is a mixture of experts, and ComfyUI routes
tokens to experts by value:

- ``MOEFeedForwardSwiGLU.forward`` (comfy/ldm/hidream/model.py:311-318 in 0.33.0, the same file in
  0.8.0): ``MoEGate`` picks each token's top 2 of 4 experts (``torch.topk`` of the gate scores, 275),
  then ``y[flat_topk_idx == i] = expert(x[flat_topk_idx == i])`` indexes with a boolean mask. The
  number of rows each expert receives depends on the activations: the mask is turned into indices
  with a device-to-host sync (``nonzero``), and the expert's matmul has a value-dependent shape. A
  CUDA graph cannot capture that (the sync is illegal during capture), and a graph frozen on one
  routing would compute another input's tokens with the wrong experts: a wrong image.
- ``moe_infer`` (327-346; unused, ``if True`` at 314 picks the path above) syncs outright:
  ``bincount().cpu().numpy()`` (331) and a Python loop over the per-expert counts.
- Detection (comfy/model_detection.py:818-835) fixes ``num_routed_experts`` = 4 for every HiDream
  checkpoint, so no real HiDream call avoids this path: a per-call ``refusal`` would send every
  call eager, i.e. BCG would do nothing while claiming support.

Why not mode breakable: its only break is attention (``optimized_attention_override``); nothing
breaks the graph around the MoE. A MoE break (each ``MOEFeedForwardSwiGLU`` run eagerly between two
graph segments, exact by construction) would make the family workable; it needs a generic way for
an adapter to name break modules, and what it saves is small (the experts, most of the FLOPs
outside attention, would run eager). Also: detection hard-codes the depth (16 double, 32 single
blocks, hidden 2560), so the synthetic-checkpoint recipe could not build a reduced-depth model for
the CPU tests; a full-size random checkpoint is 17B parameters.

Other spots read (0.33.0), harmless: ``patchify``/``unpatchify`` (679-702, 668-677) loop over
``img_sizes`` built from ``x.shape``; ``expand_timesteps`` (654-666) branches on tensor-ness and
rank; ``_forward`` (720-829) goes through the DIFFUSION_MODEL ``WrapperExecutor`` (704-718).
"""

#: ``comfy.supported_models`` class names of this family (for the tests' refusal check).
CONFIG_CLASSES = ("HiDream",)
#: Why the family is unsupported, in one line (the module docstring has the details).
UNSUPPORTED_REASON = (
    "HiDream's mixture-of-experts routes tokens by value (boolean-mask indexing with a host sync and "
    "value-dependent shapes in every block), which no graph can replay and no BCG break covers"
)
