"""HiDream-O1-Image (``comfy.ldm.hidream_o1.model.HiDreamO1Transformer``; ``HiDreamO1``, ComfyUI
0.33.0 only): NOT supported. BCG Apply leaves the model unchanged ("unsupported model HiDreamO1").
No ``ADAPTER`` and no ``RECIPE`` on purpose, so it is no family.

Why. The forward keeps a key/value cache of the prompt's autoregressive prefix on the module and
picks its path by comparing tensor values on the host (comfy/ldm/hidream_o1/model.py in 0.33.0):
``_forward`` searches ``self._kv_cache_entries`` with ``torch.equal`` of the token ids and of the
positions (l.223-225); a hit takes the "hot path" (only fresh positions projected, the cached K/V
prepended), a miss the "cold path" that snapshots K/V into the module. Reference images go through
``self._visual_cache``, keyed by the input's identity, and ``(input_ids[0] == IMAGE_TOKEN_ID).nonzero()``
(l.179), a host sync with a value-dependent shape. A graph would freeze one path and one cache's
tensors, and the first call of every run differs from the rest: the forward writes state the next
call reads and branches on values, which no replay can reproduce; the only break BCG offers is
attention. Line ranges: tests/comfy/test_refused_models.py.
"""

#: ``comfy.supported_models`` class names of this family (for the tests' refusal check).
CONFIG_CLASSES = ("HiDreamO1",)
#: Why the family is unsupported, in one line (the module docstring has the details).
UNSUPPORTED_REASON = (
    "HiDream-O1 caches the prompt's key/values on the module across calls and picks the cached or the "
    "full path with torch.equal of the token ids on the host (comfy/ldm/hidream_o1/model.py:223-225), "
    "state and a branch a graph would freeze"
)
