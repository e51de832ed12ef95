"""The node zoo (issue 26): every node of this ComfyUI that takes a MODEL and returns a MODEL, with
BCG Apply before it and after it, sampled against the same workflow without BCG.

The nodes are not listed here: they are read from ComfyUI's own registry, core ``nodes.py``'s
``NODE_CLASS_MAPPINGS`` after ComfyUI's own loader (``nodes.init_extra_nodes``, custom and API
nodes off) added every ``comfy_extras/nodes_*.py`` module's nodes, V1 and V3 alike. A node is in the
zoo when one of its inputs and one of its outputs is a ``MODEL``. Each is called the way ComfyUI's
executor calls it (V3: a prepared class clone's ``FUNCTION``), with the inputs its defaults give:
the default of every widget (a combo's first option), the optional widgets at their defaults,
optional sockets left unconnected. Where a node needs a file or a second input, it is built: a
LoRA file (``lora_name``), a hypernetwork file, a LoRA state dict (``LORA_MODEL``), a second model
of the same family (``model2``), an empty-prompt conditioning (PerpNeg); ``CLIP`` inputs get
``None`` (these are model-only workflows). :data:`INPUT_OVERRIDES` lists the few inputs set
otherwise and why; :data:`SKIPS` the nodes not run and why.

Each case (node, order, family), FLUX.1 and Qwen-Image, 32x32 px, 3 steps of euler at cfg 2.5
(cond and uncond: one batch-2 call per step for FLUX, two batch-1 calls for Qwen-Image):

- the workflow without BCG, node -> KSampler, sampled twice (the first warms; both must agree),
  with the DiT calls it makes counted (``_forward`` calls, i.e. past any cache node's skip);
- with BCG, order ``node->BCG`` (node -> BCG Apply -> KSampler, BCG Apply on the node's output,
  as a workflow branching there shares it) or ``BCG->node`` (BCG Apply -> node -> KSampler), BCG
  Apply's defaults (capture on first call), sampled twice: each run must be ``torch.equal`` to the
  workflow without BCG, and its ``last_run`` must count every DiT call the workflow makes, as
  replayed or as eager with a reason. The table reports the second run (the one that replays where
  it can);
- the variant: the node's main numeric input (:func:`main_numeric_input`) changed after the BCG
  runs, and sampled again, as ComfyUI re-executes what is downstream of a changed widget: in order
  ``node->BCG`` the node and BCG Apply run again; in order ``BCG->node`` only the node (BCG Apply's
  output is cached), so the session that captured under the old value serves the new one. It must
  equal the workflow without BCG at the new value: this is how a stale graph shows;
- and beside that: the plain model sampled without any node must still give what it gave before
  the case (a node or BCG that left the shared model changed shows there), and in order
  ``node->BCG`` the node's own output sampled without BCG after the BCG runs must still give the
  reference (the other branch of a workflow that shares the node's output).

A node whose workflow fails without BCG passes when the BCG workflow fails with the same error,
and is listed with it. The models are FLUX.1 and Qwen-Image at depth 1 and a narrow width (hidden
256: 2 heads of 128) so the zoo runs in minutes on two CPU cores: ComfyUI's own classes in the
families' key layouts, loaded by ComfyUI's loader (FLUX's detection reads the width from the
weights; Qwen-Image's takes its head count from the class defaults, so the narrow Qwen-Image loads
with ``num_attention_heads`` set through ``supported_models.QwenImage.unet_extra_config``, the way
``synthetic`` sets depths detection does not read). Torch runs one thread here: on a shared
two-core machine two threads wait on each other for most of a step (BCG and eager alike).

The table (node, order, family, result) is printed and written to
``$BCG_ARTIFACTS/node_zoo_comfyui_<version>.md`` (else the temp directory). Every case is a real
assertion; nothing is expected to fail and nothing is xfailed: a FAIL row is a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field

import pytest
import torch
from bcg_testing import session_of

from bench import synthetic

pytestmark = pytest.mark.comfy

FAMILIES = ("flux", "qwen_image")
ORDERS = ("node->BCG", "BCG->node")
WIDTH = HEIGHT = 32
STEPS = 3
CFG = 2.5
SEED = 3
#: (positive, negative) prompt tokens: FLUX's pair is one length (cond and uncond batch into one
#: call), Qwen-Image's two (two calls a step, two graphs).
PROMPT_LENGTHS = {"flux": (16, 16), "qwen_image": (12, 7)}
#: Narrow models: hidden 256, 2 heads of 128 (FLUX's rope axes need a head of 128).
NARROW_HEADS = 2

#: Nodes not run, and why. A node needing an input type the zoo does not build must be listed here
#: (the case fails otherwise, naming the type).
SKIPS = {
    "ARVideoI2V": "needs a VAE and a start IMAGE (autoregressive video I2V for a video model); the synthetic module builds no VAE",
    "LTXVReferenceAudio": "needs an AUDIO clip and an audio VAE (LTX-2 audio); none can be built here",
    "TripoSplatSamplingPreview": "needs a VAE of the TripoSplat 3D model; none can be built here",
    "WanInfiniteTalkToVideo": "needs a MODEL_PATCH (InfiniteTalk audio projector), a VAE and audio-encoder output (Wan video)",
    "QwenImageDiffsynthControlnet": "needs a MODEL_PATCH (DiffSynth blockwise ControlNet checkpoint), a VAE and an IMAGE; "
    "no synthetic recipe builds the patch or the VAE",
    "ZImageFunControlnet": "needs a MODEL_PATCH (Z-Image Fun ControlNet) and a VAE; Z-Image only",
    "WanUni3CControlnetApply": "needs a MODEL_PATCH (Uni3C ControlNet), a VAE and a render video; Wan only",
    "USOStyleReference": "needs a MODEL_PATCH (USO projector) and a CLIP_VISION_OUTPUT; no synthetic recipe builds either",
    "SUPIRApply": "needs a MODEL_PATCH (SUPIR SDXL control model), a VAE and an IMAGE; SDXL only",
    "AnimaLLLiteApply": "needs a MODEL_PATCH (Anima LLLite control) and an IMAGE; Anima only",
}

#: Inputs set to other than their defaults, and why (node -> {input: (value, reason)}).
INPUT_OVERRIDES = {
    "TorchCompileModel": {
        "backend": (
            "eager",
            "the defaults (inductor; cudagraphs) generate code (minutes per compile on two CPU cores, inductor differs from "
            "compile to compile) or need CUDA; backend 'eager' runs the same TorchCompileModel wrapper and dynamo trace",
        )
    },
}

#: Socket types built by another node of the registry at its defaults (type -> node id).
BUILT_BY_NODE = {"LATENT_OPERATION": "LatentOperationTonemapReinhard"}

#: The main numeric input of a node, where the first FLOAT (else INT) widget is not it.
MAIN_INPUT = {}


# ------------------------------------------------------------------------------- the registry
def _load_registry():
    """(zoo node ids -> class, comfy_extras modules that failed to import), from ComfyUI's registry."""
    import nodes

    failed = getattr(nodes, "_bcg_zoo_import_failed", None)
    if failed is None:
        failed = asyncio.run(nodes.init_extra_nodes(init_custom_nodes=False, init_api_nodes=False)) or []
        nodes._bcg_zoo_import_failed = failed
    zoo = {}
    for node_id, cls in nodes.NODE_CLASS_MAPPINGS.items():
        try:
            spec = input_specs(cls)
            outputs = list(cls.RETURN_TYPES)
        except Exception as error:  # a node whose schema cannot be read is a finding, not a skip
            zoo[node_id] = (cls, error)
            continue
        if any(s.type == "MODEL" for s in spec) and "MODEL" in outputs:
            zoo[node_id] = (cls, None)
    return zoo, list(failed)


@dataclass
class InputSpec:
    name: str
    type: str  # "FLOAT", "INT", "COMBO", ... or a socket type ("MODEL", ...)
    required: bool
    options: dict = field(default_factory=dict)
    choices: list | None = None  # a combo's options


def input_specs(cls) -> list[InputSpec]:
    """The node's inputs from ``INPUT_TYPES()`` (V3 nodes give the same V1 form)."""
    out = []
    types = cls.INPUT_TYPES()
    for section in ("required", "optional"):
        for name, entry in (types.get(section) or {}).items():
            kind = entry[0] if isinstance(entry, (tuple, list)) else entry
            options = (
                entry[1] if isinstance(entry, (tuple, list)) and len(entry) > 1 and isinstance(entry[1], dict) else {}
            )
            choices = None
            if isinstance(kind, (list, tuple)):
                kind, choices = "COMBO", list(kind)
            elif kind == "COMBO":
                choices = list(options.get("options") or [])
            out.append(InputSpec(name, str(kind), section == "required", options, choices))
    return out


if "comfy.model_management" in sys.modules and hasattr(sys.modules.get("nodes"), "NODE_CLASS_MAPPINGS"):
    ZOO, IMPORT_FAILED = _load_registry()
else:  # conftest could not import ComfyUI: it skips every comfy test with the reason
    ZOO, IMPORT_FAILED = {}, []


def _comfy_version() -> str:
    try:
        import comfyui_version

        return comfyui_version.__version__
    except Exception:
        return "unknown"


# ------------------------------------------------------------------------------- the models
#: Each family's head-count key in its unet_config and its supported_models class.
HEAD_KEYS = {"flux": ("num_heads", "Flux"), "qwen_image": ("num_attention_heads", "QwenImage")}


def _narrow_recipe(family):
    from bench.recipe import frozen_config

    base = synthetic.family_info(family)
    config = {**base.config, HEAD_KEYS[family][0]: NARROW_HEADS}
    if family == "flux":
        config["hidden_size"] = NARROW_HEADS * 128
    return dataclasses.replace(
        base, name=f"{family}_zoo", hidden_size=NARROW_HEADS * 128, num_heads=NARROW_HEADS, config=frozen_config(config)
    )


@contextlib.contextmanager
def _narrow_at_load(family, patch):
    """While the narrow model loads: its supported_models class's ``unet_extra_config`` (applied by
    ComfyUI over the detected config) sets the head count, which detection does not read from the
    weights (Qwen-Image: the class default, 24; FLUX.1 on 0.8.0: 24; on 0.33.0 hidden / 128), and
    synthetic's detection check sees the config the model is built with."""
    import comfy.supported_models

    key, class_name = HEAD_KEYS[family]
    cls = getattr(comfy.supported_models, class_name)
    own = cls.__dict__.get("unet_extra_config")
    cls.unet_extra_config = {**cls.unet_extra_config, key: NARROW_HEADS}
    detected = synthetic.detected_config

    def built_config(name, *args, **kwargs):
        cls_name, cfg = detected(name, *args, **kwargs)
        return cls_name, ({**cfg, key: NARROW_HEADS} if cfg is not None and name == f"{family}_zoo" else cfg)

    patch.setattr(synthetic, "detected_config", built_config)
    try:
        yield
    finally:
        patch.setattr(synthetic, "detected_config", detected)
        if own is None:
            del cls.unet_extra_config
        else:
            cls.unet_extra_config = own


def _lora_for(model, family, seed=0):
    """A rank-4 LoRA on the first few Linear layers of the blocks, in ComfyUI's key format."""
    dm = model.model.diffusion_model
    layers = [
        n[: -len(".weight")]
        for n, p in dm.named_parameters()
        if n.endswith(".weight") and p.dim() == 2 and "blocks.0." in n
    ]
    g = torch.Generator().manual_seed(seed)
    lora = {}
    for name in layers[:6]:
        out_f, in_f = dm.get_parameter(name + ".weight").shape
        lora[f"diffusion_model.{name}.lora_up.weight"] = torch.randn(out_f, 4, generator=g) * 0.2
        lora[f"diffusion_model.{name}.lora_down.weight"] = torch.randn(4, in_f, generator=g) * 0.2
    return lora


def _hypernetwork(dims, seed=0):
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for d in dims:
        sd[d] = [
            {"linear.0.weight": torch.randn(d, d, generator=g) * 0.02, "linear.0.bias": torch.zeros(d)},
            {"linear.0.weight": torch.randn(d, d, generator=g) * 0.02, "linear.0.bias": torch.zeros(d)},
        ]
    return sd


@dataclass
class Family:
    name: str  # flux / qwen_image
    recipe: str  # the narrow recipe's name in synthetic.FAMILIES
    model: object
    model2: object
    positive: list
    negative: list
    lora: dict
    lora_name: str
    hypernetwork_name: str
    plain: torch.Tensor | None = None

    def sample(self, model):
        return synthetic.sample(model, self.recipe, WIDTH, HEIGHT, STEPS, CFG, self.positive, self.negative, seed=SEED)


@dataclass
class Row:
    node: str
    order: str
    family: str
    passed: bool | None  # None: skipped
    result: str
    variant: str = ""
    note: str = ""
    seconds: float = 0.0


ROWS: list[Row] = []


def _write_table():
    if not ROWS:
        return
    version = _comfy_version()
    graphs = f"CUDA graphs on {torch.cuda.get_device_name()}" if torch.cuda.is_available() else "CPU stand-in"
    lines = [
        f"# Node zoo, ComfyUI {version} ({graphs}, {WIDTH}x{HEIGHT} px, {STEPS} steps, cfg {CFG})",
        "",
        f"{sum(r.passed is True for r in ROWS)} pass, {sum(r.passed is False for r in ROWS)} FAIL, "
        f"{sum(r.passed is None for r in ROWS)} skipped; {len({r.node for r in ROWS})} nodes",
    ]
    if IMPORT_FAILED:
        lines.append(
            f"comfy_extras modules that did not import on this host (their nodes are not in the zoo): {', '.join(IMPORT_FAILED)}"
        )
    lines += [
        "",
        "| node | order | family | pass | run 2 (BCG vs eager) | variant: main input changed | note | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(ROWS, key=lambda r: (r.node.lower(), r.family, r.order)):
        mark = "skip" if r.passed is None else ("pass" if r.passed else "FAIL")
        cells = [r.node, r.order, r.family, mark, r.result, r.variant, r.note, f"{r.seconds:.1f}"]
        lines.append("| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |")
    text = "\n".join(lines) + "\n"
    folder = os.environ.get("BCG_ARTIFACTS") or tempfile.gettempdir()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"node_zoo_comfyui_{version}.md")
    with open(path, "w") as f:
        f.write(text)
    print(f"\n{text}\n(written to {path})")


@pytest.fixture(scope="module")
def zoo_families(tmp_path_factory):
    """Both narrow families (a model, a second model for merges, prompts, a LoRA and hypernetwork
    file), built once; torch on one thread for the module; the table written at the end."""
    import comfy.model_management as mm
    import folder_paths
    import safetensors.torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("zoo_models")
    for kind in ("loras", "hypernetworks"):
        (folder / kind).mkdir()
        folder_paths.add_model_folder_path(kind, str(folder / kind))
    built = {}
    try:
        for family in FAMILIES:
            recipe = _narrow_recipe(family)
            patch.setitem(synthetic.FAMILIES, recipe.name, recipe)
            with _narrow_at_load(family, patch):
                model = synthetic.load_model(recipe.name, depth=1, seed=0)
                model2 = synthetic.load_model(recipe.name, depth=1, seed=1)
            assert model.model.diffusion_model.img_in.weight.shape[0] == recipe.hidden_size, (
                "the narrow model did not load narrow"
            )
            lora = _lora_for(model, family)
            lora_name = f"zoo_{family}.safetensors"
            safetensors.torch.save_file({k: v.contiguous() for k, v in lora.items()}, str(folder / "loras" / lora_name))
            hn_name = f"zoo_{family}.pt"
            torch.save(_hypernetwork([recipe.hidden_size, 128]), str(folder / "hypernetworks" / hn_name))
            pos_len, neg_len = PROMPT_LENGTHS[family]
            positive = synthetic.make_conditioning(recipe.name, pos_len, seed=1)
            negative = synthetic.make_conditioning(recipe.name, neg_len, seed=2)
            fam = Family(family, recipe.name, model, model2, positive, negative, lora, lora_name, hn_name)
            fam.plain = fam.sample(model)
            built[family] = fam
        yield built
    finally:
        _write_table()
        built.clear()
        mm.unload_all_models()
        patch.undo()
        torch.set_num_threads(threads)


# ------------------------------------------------------------------------------- calling a node
class NotBuilt(Exception):
    """An input type the zoo does not build (the node belongs in SKIPS, with the reason)."""


def build_inputs(node_id, cls, fam: Family, main_model) -> dict:
    kwargs = {}
    overrides = INPUT_OVERRIDES.get(node_id, {})
    first_model = True
    for spec in input_specs(cls):
        if spec.name in overrides:
            kwargs[spec.name] = overrides[spec.name][0]
            continue
        if spec.type == "MODEL":
            if first_model:
                kwargs[spec.name], first_model = main_model, False
            elif spec.required:
                kwargs[spec.name] = fam.model2
            continue
        if spec.name == "lora_name":
            kwargs[spec.name] = fam.lora_name
            continue
        if spec.name == "hypernetwork_name":
            kwargs[spec.name] = fam.hypernetwork_name
            continue
        if spec.type in ("FLOAT", "INT", "BOOLEAN", "STRING", "COMBO"):
            if "default" in spec.options:
                kwargs[spec.name] = spec.options["default"]
            elif spec.type == "COMBO" and spec.choices:
                kwargs[spec.name] = spec.choices[0]
            elif spec.required:
                kwargs[spec.name] = {"FLOAT": 0.0, "INT": 0, "BOOLEAN": False, "STRING": ""}.get(spec.type)
                if kwargs[spec.name] is None:
                    raise NotBuilt(f"{spec.name}: a combo without options")
            continue
        if not spec.required:
            continue  # an optional socket: left unconnected
        if spec.type == "CLIP":
            kwargs[spec.name] = None  # model-only workflows: the LoRA's CLIP part is not under test
        elif spec.type == "CONDITIONING":
            kwargs[spec.name] = synthetic.make_conditioning(fam.recipe, PROMPT_LENGTHS[fam.name][1], seed=7)
        elif spec.type == "LORA_MODEL":
            kwargs[spec.name] = fam.lora
        elif spec.type in BUILT_BY_NODE:
            import nodes

            producer = nodes.NODE_CLASS_MAPPINGS[BUILT_BY_NODE[spec.type]]
            kwargs[spec.name] = call_node(
                producer, build_inputs(BUILT_BY_NODE[spec.type], producer, fam, None), spec.type
            )
        elif spec.type == "LATENT":
            kwargs[spec.name] = {
                "samples": torch.randn(
                    synthetic.empty_latent(fam.recipe, WIDTH, HEIGHT).shape, generator=torch.Generator().manual_seed(5)
                )
            }
        else:
            raise NotBuilt(f"{spec.name}: {spec.type}")
    return kwargs


def call_node(cls, kwargs, output="MODEL"):
    """The node's first ``output``, called as ComfyUI's executor calls it."""
    from comfy_api.internal import _ComfyNodeInternal

    if getattr(cls, "INPUT_IS_LIST", False):  # ComfyUI's executor then passes every input as a list
        kwargs = {k: [v] for k, v in kwargs.items()}
    if isinstance(cls, type) and issubclass(cls, _ComfyNodeInternal):
        cls.VALIDATE_CLASS()
        clone = cls.PREPARE_CLASS_CLONE(None)
        result = getattr(clone, cls.FUNCTION)(**kwargs)
    else:
        result = getattr(cls(), cls.FUNCTION)(**kwargs)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    if hasattr(result, "args"):  # a V3 NodeOutput
        result = result.args
    elif isinstance(result, dict):
        result = result["result"]
    return result[list(cls.RETURN_TYPES).index(output)]


def main_numeric_input(node_id, cls):
    """(input name, changed value) of the node's main numeric input, or None: MAIN_INPUT, else its
    first FLOAT widget, else its first INT widget; the value halved (or moved by a step) within its
    bounds."""
    specs = [
        s for s in input_specs(cls) if s.type in ("FLOAT", "INT") and s.name not in INPUT_OVERRIDES.get(node_id, {})
    ]
    if node_id in MAIN_INPUT:
        specs = [s for s in specs if s.name == MAIN_INPUT[node_id]]
    spec = next((s for s in specs if s.type == "FLOAT"), None) or next((s for s in specs if s.type == "INT"), None)
    if spec is None:
        return None
    default = spec.options.get("default", 0)
    lo, hi = spec.options.get("min", -math.inf), spec.options.get("max", math.inf)
    step = spec.options.get("step") or (1 if spec.type == "INT" else 0.25)
    for value in (default * 0.5, default + step, default - step, default + 10 * step):
        value = int(round(value)) if spec.type == "INT" else round(value, 6)
        if value != default and lo <= value <= hi:
            return spec.name, value
    return None


# ------------------------------------------------------------------------------- one case
class DiTCalls:
    """Counts the DiT forwards (``_forward``, past any cache node's skip) while active."""

    def __init__(self, dm):
        self.cls = type(dm)
        self.n = 0

    @contextlib.contextmanager
    def counting(self):
        original = self.cls._forward
        counter = self

        @torch.compiler.disable  # counted when it runs, also inside a model TorchCompileModel compiled
        def count():
            counter.n += 1

        def _forward(self, *args, **kwargs):
            count()
            return original(self, *args, **kwargs)

        self.n = 0
        self.cls._forward = _forward
        try:
            yield self
        finally:
            self.cls._forward = original


def _diff(a, b):
    if a.shape != b.shape:
        return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
    return f"max abs diff {(a.float() - b.float()).abs().max().item():.4g}"


def _summary(run):
    parts = [f"replayed {run['replayed']}/{run['calls']}"]
    if run["eager"]:
        parts.append("eager: " + "; ".join(f"{n}x {reason}" for reason, n in run["eager"].items()))
    return ", ".join(parts)


def _error(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


class Case:
    def __init__(self, nodes, node_id, cls, fam: Family, order):
        self.nodes, self.node_id, self.cls, self.fam, self.order = nodes, node_id, cls, fam, order
        self.calls = DiTCalls(fam.model.model.diffusion_model)
        self.problems: list[str] = []

    def node(self, model, **changed):
        return call_node(self.cls, {**build_inputs(self.node_id, self.cls, self.fam, model), **changed})

    def bcg(self, model):
        (out,) = self.nodes["BCGApply"].execute(model, "auto").args
        return out

    def eager(self, make):
        """(output, DiT calls) of the workflow without BCG, sampled twice (warm-up, reference)."""
        m = make()
        with self.calls.counting():
            warm = self.fam.sample(m)
        with self.calls.counting():
            ref = self.fam.sample(m)
        if not torch.equal(warm, ref):
            self.problems.append(f"the workflow without BCG is not repeatable ({_diff(warm, ref)})")
        return m, ref, self.calls.n

    def check_run(self, model, ref, calls, what):
        """Sample ``model`` (BCG in it); the run's summary, with any problem recorded."""
        session = session_of(model)
        if session is None:
            self.problems.append(f"{what}: the sampled model has no BCG session (the node dropped BCG's hooks)")
            out = self.fam.sample(model)
            if not torch.equal(out, ref):
                self.problems.append(f"{what}: {_diff(out, ref)}")
            return "no BCG session"
        before = session.last_run
        out = self.fam.sample(model)
        run = session.last_run
        summary = "no run summary" if run is None or run is before else _summary(run)
        if not torch.equal(out, ref):
            self.problems.append(f"{what}: {_diff(out, ref)} ({summary})")
        if run is None or run is before:
            self.problems.append(f"{what}: BCG wrote no run summary for this run ({calls} DiT calls uncounted)")
        else:
            if run["calls"] != calls:
                self.problems.append(
                    f"{what}: BCG counted {run['calls']} DiT calls, the workflow makes {calls} ({summary})"
                )
            if run["replayed"] + sum(run["eager"].values()) != run["calls"] or not all(
                isinstance(r, str) and r for r in run["eager"]
            ):
                self.problems.append(f"{what}: calls without a reason ({run})")
        return summary


def _case_params():
    params = []
    for node_id in sorted(ZOO, key=str.lower):
        for family in FAMILIES:
            for order in ORDERS:
                marks = [pytest.mark.skip(reason=SKIPS[node_id])] if node_id in SKIPS else []
                params.append(pytest.param(node_id, order, family, marks=marks, id=f"{node_id}-{order}-{family}"))
    return params


@pytest.fixture(scope="module", autouse=True)
def _tabulate_skips():
    for node_id in ZOO:
        if node_id in SKIPS:
            ROWS.append(Row(node_id, "both", "both", None, f"skipped: {SKIPS[node_id]}"))
    yield


@pytest.mark.parametrize("node_id,order,family", _case_params())
def test_node_zoo(pack, standin_graphs, zoo_families, node_id, order, family):
    import comfy.model_management as mm

    _, nodes = pack
    cls, schema_error = ZOO[node_id]
    fam = zoo_families[family]
    row = Row(node_id, order, family, False, "")
    ROWS.append(row)
    t0 = time.perf_counter()
    try:
        _run_case(nodes, node_id, cls, schema_error, fam, order, row)
    finally:
        mm.unload_all_models()
        row.seconds = time.perf_counter() - t0
        if row.passed is False and not row.result:
            row.result = "FAIL: the case raised (see the test's error)"
    if not row.passed:
        pytest.fail(f"{node_id} ({order}, {family}): {row.result}; variant: {row.variant}; {row.note}", pytrace=False)


def _run_case(nodes, node_id, cls, schema_error, fam: Family, order, row: Row):
    if schema_error is not None:
        row.result = f"FAIL: the node's schema cannot be read ({_error(schema_error)})"
        return
    case = Case(nodes, node_id, cls, fam, order)
    try:
        build_inputs(node_id, cls, fam, fam.model)
    except NotBuilt as missing:
        row.result = (
            f"FAIL: input {missing} is not built by the zoo: build it or list the node in SKIPS with the reason"
        )
        return
    notes = []
    if node_id in INPUT_OVERRIDES:
        notes.append("; ".join(f"{k}={v!r} ({why})" for k, (v, why) in INPUT_OVERRIDES[node_id].items()))

    # The workflow without BCG: node -> KSampler.
    try:
        m_eager, ref, calls = case.eager(lambda: case.node(fam.model))
    except Exception as e:  # the node (or its sampling) fails without BCG: BCG's must fail alike
        eager_error = _error(e)
        try:
            model = case.node(case.bcg(fam.model)) if order == "BCG->node" else case.bcg(case.node(fam.model))
            fam.sample(model)
        except Exception as e2:
            same = _error(e2) == eager_error
            row.passed = same
            row.result = (
                f"both fail: {eager_error}" if same else f"FAIL: without BCG {eager_error}; with BCG {_error(e2)}"
            )
            row.note = "; ".join(notes)
            return
        row.result = f"FAIL: without BCG the workflow fails ({eager_error}), with BCG it runs"
        return
    plain = fam.sample(fam.model)
    if not torch.equal(plain, fam.plain):
        notes.append(f"the node changed the plain model's output without BCG ({_diff(plain, fam.plain)})")
        fam.plain = plain
    notes.append(
        "the node changes the output"
        if not torch.equal(ref, fam.plain)
        else "the node leaves the output unchanged here"
    )

    # With BCG, two runs.
    if order == "node->BCG":
        m_bcg = case.bcg(m_eager)
    else:
        applied = case.bcg(fam.model)  # BCG Apply's output: cached by ComfyUI when only the node's input changes
        m_bcg = case.node(applied)
    case.check_run(m_bcg, ref, calls, "run 1")
    summary = case.check_run(m_bcg, ref, calls, "run 2")
    if order == "node->BCG":
        with case.calls.counting():
            again = fam.sample(m_eager)
        if not torch.equal(again, ref):
            case.problems.append(f"the node's output sampled without BCG after BCG ran differs ({_diff(again, ref)})")

    # The variant: the main numeric input changed, the workflow re-run downstream of it.
    variant = main_numeric_input(node_id, cls)
    if variant is None:
        row.variant = "n/a (no numeric input)"
    else:
        name, value = variant
        _, ref2, calls2 = case.eager(lambda: case.node(fam.model, **{name: value}))
        m2 = (
            case.bcg(case.node(fam.model, **{name: value}))
            if order == "node->BCG"
            else case.node(applied, **{name: value})
        )
        v_summary = case.check_run(m2, ref2, calls2, f"variant {name}={value}")
        effect = "" if not torch.equal(ref2, ref) else " (no effect on the output)"
        row.variant = f"{name}={value}{effect}: {v_summary}"

    after = fam.sample(fam.model)
    if not torch.equal(after, fam.plain):
        case.problems.append(f"the plain model's output changed after the BCG runs ({_diff(after, fam.plain)})")
        fam.plain = after
    row.note = "; ".join(notes)
    if case.problems:
        row.passed = False
        row.result = "FAIL: " + " | ".join(case.problems) + f" [run 2: {summary}]"
    else:
        row.passed = True
        row.result = summary
