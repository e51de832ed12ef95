"""What the runner needs to know about one model family, and nothing the runner hard-codes.

An adapter names the family, says how text lengths reach the DiT (which lengths share a graph and
whether that is exact against stock ComfyUI), labels a call for people (``1024x1024 txt256 b2``),
and may refuse a call it knows a graph cannot serve. Everything else is generic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ContextManager, NamedTuple

from ..config import Mode

#: Image pixels per latent cell of most families' VAE (FLUX.2's is 16).
VAE_SCALE = 8


@dataclass(frozen=True)
class ModelAdapter:
    family: str
    display_name: str
    #: ``comfy.supported_models`` class names that this adapter serves.
    config_classes: tuple[str, ...]
    #: Name of the text-context argument of the DiT's ``_forward``.
    context_arg: str = "context"
    #: Longest text context a warm-up bucket may ask for.
    max_text_length: int = 1024
    #: How text lengths map to graphs; shown in the warm-up report and the support table (docs/models.md).
    text_policy: str = "exact length: each prompt length the DiT sees is its own graph"
    #: True when the whole forward has no graph-unsafe op, so mode 'full' (one graph) may be used.
    full_graph_safe: bool = True
    #: Measured on the H200 (tests/comfy/test_full_size_cuda.py): text padded to a bucket with the
    #: padded rows kept out of attention gives real rows bit-equal to the exact length. None: not
    #: applicable (the model pads itself, or stock ComfyUI already sends padded rows).
    padded_text_rows_exact: bool | None = None
    #: Image pixels per latent cell (the family's VAE and empty-latent node).
    latent_scale: int = VAE_SCALE
    #: Video families: pixel frames per latent frame after the first (latents ``[B,C,T,H,W]``,
    #: pixel frames = (T-1) * scale + 1); labels then show frames. None: an image family.
    temporal_scale: int | None = None
    #: How the family's latent node counts pixel frames, where it is not ``temporal_scale``'s
    #: ``4k+1`` (MiniMax H3: ``17k+5``): the support table says it. None: ``{temporal_scale}k+1``.
    frame_grid: str | None = None
    #: True once the family's GPU exactness test (tests/comfy/test_full_size_cuda.py) passed on the
    #: H200. Until then BCG Apply leaves the model unchanged and says so, unless the user opts in
    #: with ``BCG_UNVERIFIED_FAMILIES=1`` (every graph is still proven bit-equal before it serves).
    gpu_verified: bool = True
    #: Where ``gpu_verified`` is False: what the H200 runs showed so far (the support table says
    #: it). Empty: no GPU run yet.
    gpu_pending: str = ""
    #: Where ``gpu_verified`` is False for a known cause rather than a test not yet run: what BCG
    #: Apply says instead of "awaits its GPU exactness test" (one sentence, the cause).
    opt_in_reason: str = ""
    #: Attributes the DiT's forward sets on its own top-level module and never reads (Cosmos-Predict2
    #: keeps ``affline_emb`` and ``crossattn_emb`` "for logging"): left out of the weights' address
    #: state, where each run's new tensors would read as moved weights and drop every graph.
    forward_scratch_attributes: tuple[str, ...] = ()
    #: The forward copies constant host tensors to the GPU (Wan's ``torch.arange(...).to(...)``),
    #: which capture refuses: captures stage them through pinned buffers held by the graph
    #: (``bcg_runtime.core.host_copies``). Set only where the adapter's docstring names each such
    #: copy and why its value depends on nothing but shapes and the model's config.
    stage_host_copies: bool = False
    #: The forward reads device values on the host and steers with them (MiniMax H3's sigma):
    #: captures hand it the live call's values (``bcg_runtime.core.host_reads``). Set only where
    #: :meth:`call_key` keys the call on every value read, each named in the adapter's docstring.
    replay_host_reads: bool = False
    #: Arguments of the DiT kept out of the key and passed as they are (besides
    #: ``transformer_options``): Python objects the tensor key cannot hold, which :meth:`call_key`
    #: stands for, and whose tensors the graph holds as constants (the key says they are equal).
    opaque_args: tuple[str, ...] = ()
    #: The tensors the family's captured forward reads that are neither its arguments nor the
    #: weights the fingerprint binds (the runner finds and holds them at every capture:
    #: ``bcg_runtime.core.outside_reads``), by ``(first op, dtype)``, or ``(first op, dtype, device
    #: type)`` for one read only where the model runs on that device type (a host table that CUDA
    #: stages, a table in the model's dtype), each with what it is and why holding it keeps a replay
    #: eager's. tests/comfy/test_family_outside_reads.py derives them per family from ComfyUI's model
    #: classes and fails on one not named here. Most families: none.
    outside_reads: tuple[tuple[tuple[str, ...], str], ...] = ()
    #: :meth:`call_key` holds the sampling step, so a key comes back once per sampling run (a
    #: schedule's next run), not once per step: the capture gate counts runs, not steps.
    keys_per_step: bool = False
    #: Width of this very model's text context where a family's sizes differ in it (FLUX.2 klein
    #: 4B 7680, klein 9B 12288, dev 15360; set by ``for_model``): zero-config warm-up prompts are
    #: built this wide. None: the family's :class:`WarmupFacts` ``text_dim``.
    text_dim: int | None = None

    def for_model(self, model_patcher: Any) -> "ModelAdapter":
        """The adapter for this very model: itself, or a copy for a family whose members differ in
        a fact above (Wan 2.2 5B's VAE is 16x where the other Wan models' is 8x)."""
        return self

    def mode_refusal(self, mode: Mode) -> str | None:
        """Why this family cannot run in ``mode`` with the fix, or None. 'full' and 'fast' are one
        graph per call, which a forward that syncs with the host breaks; 'fast' also compiles the
        blocks, and Dynamo would trace the host-copy staging and host-read modes
        (core/host_copies.py, core/host_reads.py) with the mode stack differing between warm-up,
        capture and proof: untested."""
        if mode in (Mode.FULL, Mode.FAST) and not self.full_graph_safe:
            return f"mode: '{mode.value}' is not safe for {self.display_name} (its forward syncs with the host); use 'breakable'"
        if mode is Mode.FAST and (self.stage_host_copies or self.replay_host_reads):
            what = "replay host reads" if self.replay_host_reads else "stage host copies"
            return f"mode: 'fast' is not available for {self.display_name} yet (its captures {what}); use 'auto'"
        return None

    def text_length_seen(self, tokens: int) -> int:
        """Context length the DiT receives for a prompt of ``tokens`` tokens (model padding included)."""
        return tokens

    def model_refusal(self) -> str | None:
        """Why BCG serves nothing for this very model (a fact of its checkpoint or its ComfyUI, fixed
        at load: :meth:`for_model`), or None. BCG Apply then leaves the model unchanged and says so."""
        return None

    def text_bucket(self, tokens: int) -> tuple[int, int] | None:
        """The real caption lengths that share a graph with a caption of ``tokens`` tokens
        (``(33, 64)``), where the model pads captions itself (:meth:`padded_text`); None: each
        length is its own graph."""
        return None

    def padded_text(self, diffusion_model: Any, call: dict[str, Any]) -> PaddedText | None:
        """This call with its caption as the model's own code embeds and pads it, run eagerly now,
        where from there on the forward depends on the padded length only: every caption length
        of one bucket then shares a graph. None where the family's rule does not hold for it."""
        return None

    def refusal(self, call: dict[str, Any]) -> str | None:
        """A reason this call must run eager, or None. ``call`` holds the DiT's bound arguments."""
        return None

    def call_key(self, call: dict[str, Any]) -> Any:
        """Key material beyond the tensors' shapes, from the bound call (hashable): the values of
        :attr:`opaque_args` and of what the forward reads on the host. Most families: nothing."""
        return ()

    def label(self, call: dict[str, Any], *, lengths: tuple[int, int] | None = None) -> str:
        """``WIDTHxHEIGHT txtN bB`` of a DiT call, for logs and eager reasons; video families add the
        pixel frames: ``832x480x33f txt512 b2``; a text bucket its ``lengths``: ``txt33-64``."""
        x = call.get("x")
        context = call.get(self.context_arg)
        if x is None or not hasattr(x, "shape"):
            return f"{self.display_name} call"
        h, w = x.shape[-2] * self.latent_scale, x.shape[-1] * self.latent_scale
        frames = f"x{(x.shape[-3] - 1) * self.temporal_scale + 1}f" if self.temporal_scale and x.dim() == 5 else ""
        text = (
            f" txt{context.shape[1]}"
            if context is not None and hasattr(context, "shape") and context.dim() >= 2
            else ""
        )
        if lengths is not None:
            text = f" txt{lengths[0]}-{lengths[1]}"
        return f"{w}x{h}{frames}{text} b{x.shape[0]}"


class PaddedText(NamedTuple):
    """A DiT call whose caption the model's own embedding and padding turn, eagerly, into what
    the rest of its forward reads (:meth:`ModelAdapter.padded_text`): every caption length of one
    bucket gives the rest the same shapes, so they share a key, the real length as its variant."""

    #: The call as the model received it: eager answers and every proof's truth run it.
    received: dict
    #: The call with the caption embedded and padded, as the rest of the forward takes it; where
    #: ``embed`` is set its caption is an unwritten tensor of the embedding's shape, for the key only.
    call: dict
    #: The caption's real length and the range of real lengths its bucket holds.
    length: int
    lengths: tuple[int, int]
    #: While open, the DiT's forward takes ``call``'s caption as already embedded and padded.
    embedded: Callable[[], ContextManager]
    #: Arguments of ``call`` kept out of the key (the rest of the forward does not read them).
    unkeyed: tuple[str, ...] = ()
    #: Runs the model's embedding and padding: the call with the real caption. None: ``call`` has it.
    embed: Callable[[], dict] | None = None

    def embedded_call(self) -> "PaddedText":
        """This call with its caption really embedded and padded (what a capture or a replay runs;
        an eager answer runs ``received`` and never needs it)."""
        return self if self.embed is None else self._replace(call=self.embed(), embed=None)

    def forward(self, forward: Callable) -> Callable:
        """``forward`` (the DiT's ``_forward`` or its executor) taking ``call``."""

        def rest(*args: Any, **kwargs: Any) -> Any:
            with self.embedded():
                return forward(*args, **kwargs)

        return rest


def no_pooled_output(facts: "WarmupFacts", batch: int, length: int, generator: Any, guidance: float | None) -> dict:
    """The CONDITIONING extras of a text encoder node that returns the context and nothing else."""
    return {"pooled_output": None}


@dataclass(frozen=True)
class WarmupFacts:
    """What a warm-up without a workflow's conditioning mirrors of a family's text encoder and
    latent: its placeholder prompts and empty latents (``..sampling``) are shaped like the
    encoder's and the empty-latent node's. Each family module defines its ``FACTS`` beside its
    ``ADAPTER``; a module that shares another's adapter has its own (FLUX.2 [dev]'s 15360-wide
    context is not klein's 7680, LTX-2.3's not LTX-2's)."""

    #: Width of the context the family's text encoder returns (a model of another size says its
    #: own in ``ModelAdapter.text_dim``).
    text_dim: int
    #: Width of the encoder's pooled output; None where it returns none.
    pooled_dim: int | None
    #: Tokens of a placeholder prompt when no length is asked for.
    default_cond_length: int
    #: Channels of the family's empty latent.
    latent_channels: int
    #: The distilled guidance the family's workflows set (FluxGuidance), which the extras put in the
    #: conditioning when no other is given; None: no guidance entry.
    default_guidance: float | None = None
    #: ``(facts, batch, length, generator, guidance) -> dict``: the CONDITIONING extras the family's
    #: text encoder node returns beside the context (pooled output, attention mask, guidance).
    conditioning_extras: Callable[..., dict] = no_pooled_output
    #: Families whose latent holds a second stream (LTX-2's audio): ``(facts, batch, frames) ->
    #: shape`` of that stream's empty latent for a video of ``frames`` pixel frames. Sampling then
    #: runs the joint latent (``comfy.nested_tensor.NestedTensor``), as the family's concat node
    #: makes it. None: one stream.
    second_stream_shape: Callable[..., tuple] | None = None

    def extras(self, batch: int, length: int, generator: Any, guidance: float | None) -> dict:
        """The CONDITIONING extras for a context of ``(batch, length)`` (see ``conditioning_extras``)."""
        return self.conditioning_extras(self, batch, length, generator, guidance)
