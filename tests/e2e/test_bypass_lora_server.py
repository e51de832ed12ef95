"""Load LoRA (Bypass) before BCG Apply on a stock server (issue 26, scenario 1, Dynamic VRAM).

On an NVIDIA server started with no flags, models are dynamic (Dynamic VRAM) and BCG samples with
the model's fixed-address twin, which ComfyUI builds again from the loader. The bypass LoRA lives
on the model as injections bound to the original model's modules, not as weight patches, so a twin
that carried the injections but not their binding would sample without the LoRA, and the original
model (another branch of the same workflow) would get it. One prompt holds both branches: UNET ->
LoRA (Bypass) -> BCG Apply -> KSampler, and UNET -> KSampler without the LoRA. Each saved latent
must equal what the same branch gives without BCG. On a CPU server BCG is off and models are not
dynamic: the test then checks only that the branches stay apart.
"""

from __future__ import annotations

import copy

import pytest
import torch

from e2e_setup import (
    APPLY_ID, DEPTH, FAMILY, SAMPLER_ID, SAVE_LATENT_ID, eager_twin, latent_workflow, load_client, run_prompt,
    saved_latent,
)  # fmt: skip

pytestmark = pytest.mark.e2e
client = load_client()
LORA_FILE = "bcg_e2e_bypass_lora.safetensors"
LORA_ID, PLAIN_SAMPLER_ID, PLAIN_SAVE_ID = "40", "41", "42"


def _write_lora(base) -> None:
    """A rank-4 LoRA on every 2-D weight of the first repeated block, in ComfyUI's key format."""
    from safetensors.torch import save_file

    from bench import synthetic

    shapes = {
        k: v.shape
        for k, v in synthetic.build_state_dict(FAMILY, depth=DEPTH).items()
        if k.endswith(".weight") and v.dim() == 2
    }
    first_block = next(k.split(".")[0] + ".0." for k in shapes if ".0." in k)
    g = torch.Generator().manual_seed(0)
    lora = {}
    for name, (out_features, in_features) in shapes.items():
        if name.startswith(first_block):
            key = f"diffusion_model.{name[: -len('.weight')]}"
            lora[f"{key}.lora_up.weight"] = torch.randn(out_features, 4, generator=g) * 0.2
            lora[f"{key}.lora_down.weight"] = torch.randn(4, in_features, generator=g) * 0.2
    assert lora, f"no 2-D weights in {first_block!r}"
    folder = base / "models" / "loras"
    folder.mkdir(parents=True, exist_ok=True)
    save_file(lora, str(folder / LORA_FILE))


def _with_lora_and_a_plain_branch(prompt: dict, prefix: str) -> dict:
    """``prompt`` with LoRA (Bypass) in front of BCG Apply, and a second sampler on the model
    without the LoRA (same seed, conditioning and latent) saving under ``<prefix>_plain``."""
    prompt = copy.deepcopy(prompt)
    source = prompt[APPLY_ID]["inputs"]["model"]
    prompt[LORA_ID] = {
        "class_type": "LoraLoaderBypassModelOnly",
        "inputs": {"model": list(source), "lora_name": LORA_FILE, "strength_model": 1.0},
    }
    prompt[APPLY_ID]["inputs"]["model"] = [LORA_ID, 0]
    plain = copy.deepcopy(prompt[SAMPLER_ID])
    plain["inputs"]["model"] = list(source)
    prompt[PLAIN_SAMPLER_ID] = plain
    prompt[PLAIN_SAVE_ID] = {
        "class_type": "SaveLatent",
        "inputs": {"samples": [PLAIN_SAMPLER_ID, 0], "filename_prefix": f"{prefix}_plain"},
    }
    return prompt


def _latent(server, run, node_id=SAVE_LATENT_ID):
    return saved_latent(server.base, client.wait(server.url, run.prompt_id, timeout=120), node_id)


def test_bypass_lora_before_bcg_apply_samples_with_the_lora_and_leaves_the_other_branch_without(comfy_server):
    server = comfy_server
    if not client.http_json(server.url, "/object_info/LoraLoaderBypassModelOnly"):  # {} for an unknown node
        pytest.skip("this ComfyUI has no LoraLoaderBypassModelOnly (Load LoRA (Bypass)), which 0.8.0 predates")
    _write_lora(server.base)
    for seed in (5, 6):  # the warm-up captures in the first prompt; the second one replays
        base = latent_workflow(seed=seed, prefix="bcg_e2e/bypass_nolora")
        # Without any LoRA and without BCG: what the plain branch must give.
        no_lora = _latent(server, run_prompt(server, eager_twin(base, "bcg_e2e/bypass_nolora")))
        prompt = _with_lora_and_a_plain_branch(base, "bcg_e2e/bypass_bcg")
        reference = _latent(server, run_prompt(server, eager_twin(prompt, "bcg_e2e/bypass_eager")))
        assert not torch.equal(reference, no_lora), "the LoRA changes nothing: the test could not see it ignored"

        run = run_prompt(server, prompt)
        entry = client.wait(server.url, run.prompt_id, timeout=120)
        out, plain = saved_latent(server.base, entry), saved_latent(server.base, entry, PLAIN_SAVE_ID)
        assert torch.equal(out, reference), f"seed {seed}: BCG's branch differs from the same branch without BCG"
        assert torch.equal(plain, no_lora), f"seed {seed}: the branch without the LoRA got it (or lost exactness)"
    last = run.last_run
    if server.cuda:
        assert last["replayed"] > 0 and last["replayed"] + sum(last["eager"].values()) == last["calls"], last
    else:
        assert last["state"] == "off", last
