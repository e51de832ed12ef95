"""The Wan 2.x variants of ComfyUI 0.33.0 that BCG does not serve, each with the reason read from
its forward (comfy/ldm/wan/, 0.33.0). This module defines no ``ADAPTER`` and no ``RECIPE``: it is
no family; BCG Apply leaves these models unchanged and shows the reason.

- ``WAN21_CausalAR_T2V`` (``comfy.ldm.wan.ar_model.CausalWanModel``): refused. With
  ``transformer_options["ar_state"]`` (every call of its autoregressive sampler) the forward
  (ar_model.py:260-272) runs ``forward_block`` on a KV cache held across calls: it writes this
  call's keys and values at ``kv_cache["end"]`` and advances it (:67-73), reads every earlier
  call's (:76-78), and fills the cross-attention cache once (:116-127). A call's result depends
  on state earlier calls left, and on a Python int ``end`` a graph would freeze; a replay would
  neither read the live cache length nor advance it. (``ar_state`` is also an entry BCG's key
  does not know, so such a call would run eager anyway.)

Wan Animate 2 (``WAN_Animate2``) is served by ``wan_animate2.py`` (its pose cache runs eager), Wan 2.2
Animate (``WAN22_Animate``) by ``wan_animate.py``.
"""

#: ``comfy.supported_models`` class -> why BCG does not serve it (one line each).
UNSUPPORTED_REASONS = {
    "WAN21_CausalAR_T2V": (
        "refused: the causal autoregressive forward (comfy/ldm/wan/ar_model.py:260-272) writes and advances a KV cache "
        "held across calls (kv_cache['end'], :67-73) and fills a cross-attention cache once (:116-127); a call's result "
        "depends on state earlier calls left, which a replay neither reads nor advances"
    ),
}
