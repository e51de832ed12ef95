"""SeedVR2 video restoration (``comfy.ldm.seedvr.model.NaDiT``; ``SeedVR2``, ComfyUI 0.33.0 only):
NOT supported. BCG Apply leaves the model unchanged ("unsupported model SeedVR2"). No ``ADAPTER``
and no ``RECIPE`` on purpose, so it is no family.

Why. NaDiT packs every sample into one native-resolution sequence and reads the packing's
lengths back on the host in every forward (comfy/ldm/seedvr/model.py in 0.33.0):
``repeat_concat`` splits by ``vid_len.tolist()`` / ``txt_len.tolist()`` (l.57-58, and l.74-78 in
``repeat_concat_idx``), the 3-D RoPE loops over ``shape.tolist()`` (l.300) and the window
attention over ``vid_shape.tolist()`` / ``txt_shape[:, 0].tolist()`` (l.439, 455; the class is
``torch._dynamo.disable``-d for that reason, l.424) and ``txt_len.tolist()`` (l.680); ``unflatten``
splits by ``hid_len.tolist()`` (l.1115-1116). These are device-to-host reads (syncs, which CUDA
graph capture refuses) in every block of every call, and the Swin windows' Python structure is
built from their values. The only break BCG offers is attention, which does not cover them.
"""

#: ``comfy.supported_models`` class names of this family (for the tests' refusal check).
CONFIG_CLASSES = ("SeedVR2",)
#: Why the family is unsupported, in one line (the module docstring has the details).
UNSUPPORTED_REASON = (
    "SeedVR2's NaDiT reads its packed sequences' lengths on the host in every forward (.tolist() "
    "of the shape tensors, comfy/ldm/seedvr/model.py:57-58, 300, 439, 455, 1115), host syncs no "
    "graph can capture"
)
