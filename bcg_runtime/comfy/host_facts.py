"""What this pack knows about ComfyUI 0.8.0-0.33.0 and torch, each fact with why: which state a
DiT forward never reads (left out of the fingerprint), which module values it reads that ComfyUI
changes after import, and which ``transformer_options`` entries are bookkeeping or key material.
The fingerprint, code state and options modules read these tables; the source-scanning tests
(``tests/comfy/test_process_state.py``, ``tests/comfy/test_options_reads.py``) check them against
the host's code and fail on an unclassified case."""

from __future__ import annotations

#: ``model_options`` entries that never run inside the DiT forward, with why (ComfyUI 0.8.0-0.33.0).
OUTSIDE_THE_FORWARD = {
    "transformer_options": "the DiT's own argument: classified per call (options.py)",
    "sampler_cfg_function": "combines the DiT's outputs after the calls",
    "sampler_post_cfg_function": "combines the DiT's outputs after the calls",
    "sampler_pre_cfg_function": "combines the DiT's outputs after the calls",
    "sampler_calc_cond_batch_function": "builds and combines calls: each call it makes is keyed",
    "disable_cfg1_optimization": "decides whether the uncond call is made: each call is keyed",
    "denoise_mask_function": "edits the latent between steps",
    "model_function_wrapper": "wraps apply_model: the DiT call it makes is keyed",
    "context_handler": "splits the latent into windows: each window's call is keyed",
    "to_load_options": "how ComfyUI loads the model: the weights it loads are in the fingerprint",
    "multigpu_clones": "multi-GPU split: calls on other devices or threads run eager (checked per call)",
    "multigpu_thread_pool": "multi-GPU split: calls on other devices or threads run eager (checked per call)",
    "multigpu_options": "multi-GPU split: calls on other devices or threads run eager (checked per call)",
    "ignore_multigpu": "multi-GPU split setting",
    "torch_compile_kwargs": "TorchCompileModel: BCG steps aside for compiled runs (guards.compile_refusal)",
    "registered_hooks": "ComfyUI hooks: refused when any is registered (they patch weights between calls)",
}

#: Object-patch names on the BaseModel that the DiT forward never reads.
OBJECT_PATCHES_AROUND_THE_DIT = ("model_sampling", "latent_format")


#: Instance attributes torch itself sets on a tensor (not state a subclass's code reads).
TENSOR_FLAGS = frozenset({"_is_param"})


#: Module attributes that are not state the forward reads (hook registries are classified apart).
MODULE_INTERNALS = frozenset(
    {
        "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "_backward_pre_hooks",
        "_backward_hooks", "_is_full_backward_hook", "_forward_hooks", "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
        "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
        "_load_state_dict_post_hooks", "_version", "training",
    }
)  # fmt: skip
#: Module attributes that others set and the forward never reads, with why.
NOT_READ_BY_THE_FORWARD = {
    # torch 2.14 marks what torch.compile returned; 0.8.0's TorchCompileModel compiles the DiT
    # module itself, so the marker stays on the module every clone shares. Only dynamo's tracer
    # reads it, and a compiled run makes BCG step aside (guards.compile_refusal).
    "_is_torch_compile": "torch.compile's marker, read by dynamo's tracer only",
    # ComfyUI 0.34+'s model compiler (comfy/model_prefetch.py@afc78e8) keeps a per-module malloc
    # graph here: an allocation recorder (under the native allocator BCG runs, one that records
    # nothing); left out, so its appearance after the first forward does not change the fingerprint.
    "_comfy_malloc_graph": "the model compiler's allocation recorder, never read by the forward's math",
}
#: The attribute ComfyUI's compiler keeps a module's own CUDA graph in (``{"graph", "signature"}``).
CORE_GRAPH_ATTR = "_comfy_graph"
#: Module name prefixes whose code never runs inside a DiT forward, with why (ComfyUI 0.8.0-0.33.0).
MODULES_AROUND_THE_FORWARD = {
    "comfy.samplers": "builds the DiT's calls and combines their outputs: each call it makes is keyed",
    "comfy.sample": "prepares the noise and the latent before a run",
    "comfy.k_diffusion": "the samplers: their steps run between DiT calls",
    "comfy.model_sampling": "the schedule and the input and output scaling around the DiT call",
    "comfy.context_windows": "splits the latent into windows: each window's call is keyed",
    "comfy.sd": "loads checkpoints, VAEs and text encoders",
    "comfy.sd1_clip": "the text encoders' wrapper: runs before sampling",
    "comfy.supported_models": "picks the model class at load",
    "comfy.model_detection": "reads a checkpoint's layout at load",
    "comfy.latent_formats": "scales latents around the sampler",
    "comfy.taesd": "live previews between steps",
    "comfy.hooks": "ComfyUI hooks: the fingerprint refuses a run that registers any",
    "comfy.comfy_types": "node input types",
    "comfy.options": "whether ComfyUI parses its command line, read at import",
    "comfy.cli_args": "the parsed command line: one object, read at import and by the loaders",
}

#: Module-level values that ComfyUI's forward code reads and that code changes after import (a
#: node, a memory manager), with how a replay stays eager's. tests/comfy/test_process_state.py reads
#: the host's source and fails on any such pair not listed here (ComfyUI 0.8.0-0.33.0).
PROCESS_STATE_READ_BY_FORWARDS = {
    ("comfy.model_management", "in_training"): "in the fingerprint (kernel_settings): the training node "
    "sets it, and LTX-2, Lumina 2, ERNIE-Image, FLUX's math and comfy.ops' int8 linear take another path under it",
    ("comfy.ops", "SDPA_BACKEND_PRIORITY"): "in the fingerprint (kernel_settings): ComfyUI fills it at import, "
    "other packs and this pack's mode fast (inside its own captures) edit it in place",
    ("comfy.model_management", "training_fp8_bwd"): "comfy.ops' fp8 linear keeps it for a backward pass "
    "(ctx.fp8_bwd: whether to save the input quantised); the forward's output does not depend on it",
    ("comfy.model_management", "LARGEST_AIMDO_CASTED_WEIGHT"): "Dynamic VRAM's bookkeeping of the cast buffer "
    "for weights streamed to the GPU (comfy.ops, an offload stream); BCG samples only a model whose weights "
    "are all resident (a fixed-address twin under Dynamic VRAM), where that path is not taken",
    ("comfy.ldm.seedvr.vae", "_NORM_LIMIT"): "SeedVR's VAE, which runs outside any DiT forward",
}

#: Globals ComfyUI rebinds while it runs that no forward reads, left out, with why.
REBOUND_OUTSIDE_THE_FORWARD = {
    ("comfy.model_management", "LARGEST_CASTED_WEIGHT"): "the largest weight cast to the GPU for a partly "
    "loaded model, kept to size a buffer",
    ("comfy.model_management", "TOTAL_PINNED_MEMORY"): "pinned host memory in use, counted as models load",
    ("comfy.model_management", "interrupt_processing"): "the Cancel flag: a forward that checks it raises, "
    "and never computes with it",
    ("comfy.utils", "PROGRESS_BAR_HOOK"): "the progress bar the sampler drives between steps",
    ("comfy.utils", "PROGRESS_BAR_ENABLED"): "whether that progress bar draws",
    ("comfy.memory_management", "RAM_CACHE_HEADROOM"): "how much RAM the model cache keeps free",
    ("comfy.memory_management", "extra_ram_release_callback"): "how the model cache frees RAM",
    ("comfy.model_prefetch", "PREFETCH_QUEUES"): "queues of weights streamed to the GPU, emptied after each "
    "run; BCG serves only a model whose weights are all on the GPU, for which the forward makes no queue",
    ("comfy.model_prefetch", "GRAPH_CAPTURE_STREAMS"): "the streams of ComfyUI's own per-block graphs for "
    "streamed weights, emptied with the queues",
}

#: torch's namespaces whose functions ComfyUI's forwards call by attribute at every call, the ones
#: nodes rebind (``torch.nn.functional.scaled_dot_product_attention`` to another attention kernel).
TORCH_NAMESPACES = ("torch", "torch.nn.functional")

#: Class attributes no forward runs, left out: what builds, copies, pickles or prints a module, and
#: the tags torch.compile adds (``___``-prefixed). torch.compile's first use in a process patches
#: ``torch.nn.Module.__init__`` and ``__setstate__`` to tag modules it traced: a graph of a model
#: that TorchCompileModel never touches would be dropped for it.
CLASS_ATTRIBUTES_OUTSIDE_THE_FORWARD = frozenset(
    {
        "__init__",
        "__new__",
        "__setstate__",
        "__getstate__",
        "__reduce__",
        "__reduce_ex__",
        "__repr__",
        "__str__",
        "__dir__",
        "__init_subclass__",
        "__subclasshook__",
        "__doc__",
        "__annotations__",
    }
)


#: Bookkeeping the DiT writes itself as it walks its blocks, derived from shapes that are in the
#: key; present at entry only when a caller hands one options dict to several calls. A forward's
#: reads of these are of its own values once it wrote them.
WRITTEN_BY_THE_DIT = frozenset(
    {
        "total_blocks",
        "block_type",
        "block_index",
        "block",
        "transformer_index",
        "activations_shape",
        "original_shape",
        "img_slice",  # 0.33 Flux/Krea2: [text tokens, all tokens], for patches
        "grid_sizes",  # 0.33 Wan: the patch grid (T, H, W) of x, for patches
        "reference_image_num_tokens",  # 0.33 Flux/Krea2: reference latents' token counts, for patches
    }
)
#: Entries that carry no computation for the DiT forward itself (ComfyUI 0.8.0 to 0.33.0): ComfyUI
#: hands them to patches, hooks and wrappers. Every capture checks that its forward reads none of
#: them (:class:`WatchedOptions`); :data:`KNOWN_BOOKKEEPING_READS` lists the lines of ComfyUI's DiT
#: code that do read one, with what keeps each from a graph.
BOOKKEEPING_KEYS = (
    frozenset(
        {
            "wrappers",  # wrapper chain; BCG checks that it is innermost itself
            "callbacks",
            "sigmas",  # read only by patches, and patches make the call eager
            "sample_sigmas",  # the whole schedule: read only by hooks and patches (0.33 moves it to the device)
            "cond_or_uncond",
            "uuids",
            # 0.33's multi-GPU split: a call that carries it runs eager before its options are read (decision.py)
            "multigpu_thread_device",
            "easycache",  # EasyCache's state; its wrapper runs outside BCG's
        }
    )
    | WRITTEN_BY_THE_DIT
)
PATCH_READ = "a model patch's code: a call with active patches runs eager (options_key)"
#: Every line of ``comfy/ldm`` (0.8.0 and 0.33.0) that reads a bookkeeping entry the DiT does not
#: write itself, with what keeps it out of a served graph. tests/comfy/test_options_reads.py fails
#: on a ComfyUI with a line not listed here: a forward that reads one of these from a copy the
#: watch cannot follow (``{**options}``) or on a path a capture did not take would otherwise be
#: served with the captured call's value.
KNOWN_BOOKKEEPING_READS = {
    ("comfy/ldm/anima/lllite.py", 'sigmas = transformer_options.get("sigmas")'): PATCH_READ + " (ControlNet-LLLite)",
    ("comfy/ldm/supir/supir_patch.py", 'sigma = kwargs["transformer_options"].get("sigmas")'): PATCH_READ + " (SUPIR)",
    (
        "comfy/ldm/wan/model_multitalk.py",
        'wrappers = model_options["transformer_options"]["wrappers"]',
    ): "MultiTalk's patch set-up, reading the model's options where it installs its wrapper, not a forward",
    (
        "comfy/ldm/hunyuan_video/model.py",
        "w = torch.where(transformer_options['sigmas'][0] == transformer_options['sample_sigmas'])[0]  # This most likely could be improved",
    ): "the meanflow path (time_r_in): HunyuanVideo 1.5 and HunyuanImage 2.1 adapters refuse such checkpoints",
    (
        "comfy/ldm/hunyuan_video/model.py",
        "timesteps_r = transformer_options['sample_sigmas'][w[0] + 1]",
    ): "the meanflow path (time_r_in): HunyuanVideo 1.5 and HunyuanImage 2.1 adapters refuse such checkpoints",
    (
        "comfy/ldm/seedvr/model.py",
        'txt, txt_shape = self._resolve_text_conditioning(context, transformer_options.get("cond_or_uncond"))',
    ): "SeedVR2: a refused family (models/seedvr2.py)",
    (
        "comfy/ldm/seedvr/model.py",
        'return self._swap_pos_neg_halves(out, transformer_options.get("cond_or_uncond"))',
    ): "SeedVR2: a refused family (models/seedvr2.py)",
    (
        "comfy/ldm/trellis2/model.py",
        'cond_or_uncond = transformer_options.get("cond_or_uncond")',
    ): "TRELLIS.2: a 3-D model, out of scope (models/out_of_scope.py)",
}
ATTENTION_OVERRIDE = "optimized_attention_override"
#: Plain values that steer the forward's math: their frozen values enter the key.
KEYED_OPTIONS = (
    "rope_options",
    # ChromaRadianceOptions: overrides of Chroma Radiance's params (nerf_tile_size, use_sequential_txt_ids)
    "chroma_radiance_options",
    # ModelSamplingMiniMaxH3 (MiniMaxH3SigmaShift): the flow shifts MiniMax H3's forward reads as
    # floats and steers its timestep rows with; the audio shift moves the math at an unchanged step
    "minimax_h3_sigma_shift_video",
    "minimax_h3_sigma_shift_audio",
)
#: 0.33 (``BaseModel._apply_model``): True when the model is a Dynamic VRAM patcher, whose forward
#: faults weights in through side-stream prefetch queues (``comfy/model_prefetch.py``). False is
#: bookkeeping; True means weights have no fixed address for this call.
DYNAMIC_PREFETCH = "prefetch_dynamic_vbars"
