"""A bad value of a BCG node's input, as ComfyUI itself reports it: one error, on that input.

Validation goes through ComfyUI's own ``execution.validate_prompt`` with the pack loaded by
ComfyUI's own loader (``nodes.load_custom_node``) in a prompt of real nodes (a diffusion-model
loader, BCG Apply, BCG Warmup Capture, PreviewAny). ComfyUI attaches what ``validate_inputs``
returns to every input the method takes, so a bad ``resolutions`` must come back as exactly one
``custom_validation_failed`` error with ``input_name`` ``resolutions`` and a message naming the
field and the fix, and nothing on ``model`` or the other fields.

What can only be judged when the node runs (a frame count on an image model, a mode the family
cannot take, a bad ``text_buckets``, no BCG Apply before the warm-up) stops the node with one line:
its output is ComfyUI's execution blocker with that message (``real`` ComfyUI turns it into the
blockers its executor hands on, ``execution.get_output_from_returns``), and the log has that line
once and no traceback. The e2e layer (tests/e2e/test_input_errors_server.py) runs both through a
real server.
"""

import asyncio
import logging
import os
from pathlib import Path

import pytest
from bcg_testing import ROOT, session_of

from bench import synthetic

pytestmark = pytest.mark.comfy
UNET = "bcg_input_errors.safetensors"


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    """ComfyUI's node registry with the pack and PreviewAny loaded by ComfyUI's loader, and a
    diffusion-model file name the loader's list offers (validation reads names, not files)."""
    import folder_paths
    import nodes

    for folder in ("diffusion_models", "text_encoders"):
        path = tmp_path_factory.mktemp(folder)
        (path / UNET).write_bytes(b"")
        folder_paths.add_model_folder_path(folder, str(path))
    comfy_path = Path(os.environ["COMFYUI_PATH"])
    assert asyncio.run(
        nodes.load_custom_node(str(comfy_path / "comfy_extras" / "nodes_preview_any.py"), module_parent="comfy_extras")
    )
    assert asyncio.run(nodes.load_custom_node(str(ROOT)))
    assert {"BCGApply", "BCGWarmupCapture", "PreviewAny", "UNETLoader"} <= set(nodes.NODE_CLASS_MAPPINGS)
    return nodes.NODE_CLASS_MAPPINGS


def prompt(**warmup) -> dict:
    inputs = {"model": ["2", 0], "resolutions": "512x512", "text_buckets": "64", "batch_sizes": "1", **warmup}
    return {
        "1": {"class_type": "UNETLoader", "inputs": {"unet_name": UNET, "weight_dtype": "default"}},
        "2": {
            "class_type": "BCGApply",
            "inputs": {
                "model": ["1", 0],
                "mode": "auto",
                "memory_budget_mb": 0,
                "verify": False,
                "capture": "on first call",
            },
        },
        "3": {"class_type": "BCGWarmupCapture", "inputs": inputs},
        "4": {"class_type": "PreviewAny", "inputs": {"source": ["3", 1]}},
    }


def validate(p: dict):
    import execution

    return asyncio.run(execution.validate_prompt("bcg-test", p, None))


def test_a_good_prompt_validates(registered):
    ok, error, outputs, node_errors = validate(prompt())
    assert ok and error is None and node_errors == {}, node_errors


@pytest.mark.parametrize(
    "value,message",
    [
        ("512x", "resolutions: '512x' is not WIDTHxHEIGHT (e.g. 1024x1024)"),
        (
            "1001x1000",
            "resolutions: '1001x1000' has width 1001, not a multiple of 8 (the latent grid); use 1000 or 1008",
        ),
        ("0x512", "resolutions: '0x512' has width 0; sizes must be positive"),
        ("512x512, 640*480x0", "frame counts must be 1 to"),
    ],
)
def test_a_bad_resolutions_marks_that_input_alone(registered, value, message):
    ok, error, _, node_errors = validate(prompt(resolutions=value))
    assert not ok and error["type"] == "prompt_outputs_failed_validation"
    assert set(node_errors) == {"3"}, node_errors  # not BCG Apply, not the loader, not PreviewAny
    [only] = node_errors["3"]["errors"]
    assert only["type"] == "custom_validation_failed" and only["extra_info"] == {"input_name": "resolutions"}, only
    assert only["details"].startswith("resolutions - resolutions: ") and message in only["details"], only["details"]


def test_a_linked_model_and_conditioning_are_never_marked(registered):
    """The inputs the issue saw marked for one bad value (model, positive, the other fields): a
    prompt with conditioning and a latent connected still gets exactly one error."""
    p = prompt(resolutions="64y64")
    p["5"] = {"class_type": "EmptyLatentImage", "inputs": {"width": 64, "height": 64, "batch_size": 1}}
    p["6"] = {"class_type": "CLIPLoader", "inputs": {"clip_name": UNET, "type": "stable_diffusion"}}
    p["7"] = {"class_type": "CLIPTextEncode", "inputs": {"clip": ["6", 0], "text": "a fox"}}
    p["3"]["inputs"].update(latent=["5", 0], positive=["7", 0], negative=["7", 0])
    ok, _, _, node_errors = validate(p)
    assert not ok and set(node_errors) == {"3"}, node_errors
    [only] = node_errors["3"]["errors"]
    assert only["extra_info"]["input_name"] == "resolutions" and "'64y64' is not WIDTHxHEIGHT" in only["details"]
    p["3"]["inputs"]["resolutions"] = "64x64"
    assert validate(p)[0] is True


def test_an_empty_resolutions_is_judged_when_the_node_runs(registered):
    """Empty is valid with a latent connected, which validation cannot see: it passes there."""
    ok, _, _, node_errors = validate(prompt(resolutions=""))
    assert ok and node_errors == {}


# ------------------------------------------------------------------------- judged at execution
def _blocked_message(output, node_cls) -> str:
    """What ComfyUI's executor makes of a node's return value: every output an ExecutionBlocker
    with one message, which it then shows as ``Execution Blocked: <message>``."""
    import execution
    from comfy_execution.graph_utils import ExecutionBlocker

    outputs, _, _ = execution.get_output_from_returns([output], node_cls)
    blockers = [o[0] for o in outputs]
    assert len(blockers) == len(node_cls.RETURN_TYPES) and all(isinstance(b, ExecutionBlocker) for b in blockers), (
        blockers
    )
    assert len({b.message for b in blockers}) == 1
    return blockers[0].message


@pytest.fixture(scope="module")
def zimage():
    return synthetic.load_model("zimage", depth=1, seed=0)


def _one_line_no_traceback(caplog, message: str) -> None:
    lines = [r for r in caplog.records if "[BCG]" in r.getMessage()]
    assert [r.getMessage() for r in lines] == [f"[BCG] {message}"], [r.getMessage() for r in lines]
    assert lines[0].levelno == logging.ERROR and lines[0].exc_info is None
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize(
    "fields,message",
    [
        (
            {"resolutions": "64x64x5"},
            "BCG Warmup Capture: resolutions: '64x64x5' gives a frame count, but Z-Image makes images; write 64x64",
        ),
        (
            {"text_buckets": "64,abc"},
            "BCG Warmup Capture: text_buckets: 'abc' is not a whole number; give e.g. 64,128,256,512",
        ),
        ({"text_buckets": "5000"}, "BCG Warmup Capture: text_buckets: 5000 is out of range; accepted: 1 to"),
        ({"batch_sizes": "0"}, "BCG Warmup Capture: batch_sizes: 0 is out of range; accepted: 1 to 64"),
        ({"resolutions": ""}, "BCG Warmup Capture: resolutions: empty; give at least one WIDTHxHEIGHT"),
        (
            {"text_buckets": ""},
            "BCG Warmup Capture: text_buckets: empty and no conditioning connected; give buckets (e.g. 256) or connect positive",
        ),
    ],
)
def test_warmup_values_judged_at_run_time_stop_the_node_with_one_line(pack, zimage, caplog, fields, message):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(zimage, "auto").args
    inputs = {"resolutions": "64x64", "text_buckets": "64", "batch_sizes": "1", **fields}
    caplog.clear()
    caplog.set_level(logging.INFO)
    out = nodes["BCGWarmupCapture"].execute(bcg_model, **inputs)
    text = _blocked_message(out, nodes["BCGWarmupCapture"])
    assert text.startswith(message) and "\n" not in text, text
    assert out.ui == {"text": (text,)}  # the node's report output says it too (the API's history)
    _one_line_no_traceback(caplog, text)
    assert session_of(bcg_model).last_warmup is None  # stopped before any work


def test_warmup_without_bcg_apply_names_what_to_connect(pack, zimage, caplog):
    _, nodes = pack
    caplog.set_level(logging.INFO)
    out = nodes["BCGWarmupCapture"].execute(zimage, "64x64", "64", "1")
    text = _blocked_message(out, nodes["BCGWarmupCapture"])
    assert (
        text
        == "BCG Warmup Capture: model: no BCG Apply on this model; connect BCG Apply between the model loader and BCG Warmup Capture"
    )
    _one_line_no_traceback(caplog, text)


@pytest.fixture(scope="module")
def wan():
    return synthetic.load_model("wan", depth=1, seed=0)


def test_a_frame_count_off_the_video_grid_names_the_counts_to_use(pack, wan, caplog):
    _, nodes = pack
    (bcg_model,) = nodes["BCGApply"].execute(wan, "auto").args
    caplog.clear()
    caplog.set_level(logging.INFO)
    out = nodes["BCGWarmupCapture"].execute(bcg_model, "64x64x6", "64", "1")
    text = _blocked_message(out, nodes["BCGWarmupCapture"])
    assert text.startswith("BCG Warmup Capture: resolutions: '64x64x6' has 6 frames; ") and text.endswith(
        "use 5 or 9"
    ), text
    _one_line_no_traceback(caplog, text)


def test_a_mode_the_family_cannot_take_stops_bcg_apply_with_one_line(pack, wan, caplog):
    """Mode 'fast' is not offered for a family whose captures stage host copies (Wan): that
    depends on the model, so it is judged when BCG Apply runs."""
    _, nodes = pack
    caplog.set_level(logging.INFO)
    out = nodes["BCGApply"].execute(wan, "fast")
    text = _blocked_message(out, nodes["BCGApply"])
    assert (
        text == "BCG Apply: mode: 'fast' is not available for Wan yet (its captures stage host copies); use 'auto'"
    ), text
    _one_line_no_traceback(caplog, text)


def test_input_errors_name_their_field():
    from bcg_runtime.errors import InputError
    from bcg_runtime.plan import PlanError

    assert PlanError("resolutions: empty; give one").field == "resolutions"
    assert InputError("no colon here").field is None and issubclass(PlanError, ValueError)
