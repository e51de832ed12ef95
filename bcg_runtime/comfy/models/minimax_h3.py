"""MiniMax H3 (``comfy.ldm.minimax.model.MiniMaxH3Model``; ``MiniMaxH3``, ComfyUI 0.33.0 only): NOT
supported. BCG Apply leaves the model unchanged ("unsupported model MiniMaxH3"). No ``ADAPTER``
and no ``RECIPE`` on purpose, so it is no family.

Why. The forward reads the sampler's timestep on the host in every call and builds Python control
structures from its value (comfy/ldm/minimax/model.py in 0.33.0):

- ``MiniMaxH3Model._forward`` l.576-578: ``sigma_v = (timestep.flatten()[0] / 1000).float()``, then
  ``t_v = float(1.0 - sigma_v)`` and ``t_a = float(1.0 - time_shift_sigma(sigma_v, ...))``: a
  device-to-host read of the timestep (a sync, which CUDA graph capture refuses).
- l.585-638: those floats key Python dicts and sets: ``seg_t`` (per-segment timesteps),
  ``unique_t = sorted({t_v, t_a} | ...)`` (l.611), ``t_row`` and the ``mod_segments`` row indices
  into the timestep-embedding table; with a noise mask also ``rows_t.unique().numel() == 1``
  (l.597/606), ``.unique().tolist()`` (l.612-613, 620) and ``bool((m >= 1 - 1e-3).all())`` (l.603):
  host reads of mask values.

A graph captured at one step would replay that step's timestep rows for every other step (the
sigma differs at every step), so no graph can serve a sampling run. Putting the value in the key
does not help: each step's sigma would be its own graph, and the capture itself still performs the
``float()`` sync. A BCG break at that spot does not exist (the only break is attention), and the
read is at the top of ``_forward``, before anything a graph would save. Also batch 1 only
(l.557: ``MiniMax H3 supports batch size 1``), so cond and uncond never batch.
"""

#: ``comfy.supported_models`` class names of this family (for the tests' refusal check).
CONFIG_CLASSES = ("MiniMaxH3",)
#: Why the family is unsupported, in one line (the module docstring has the details).
UNSUPPORTED_REASON = (
    "MiniMax H3's forward reads the timestep on the host in every call (float() of the sigma, "
    "comfy/ldm/minimax/model.py:577-578 in 0.33.0) and builds its timestep-embedding row indices "
    "from that value in Python, which a graph would freeze at one step"
)
