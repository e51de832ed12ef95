"""Editing API-format workflows: find the nodes a job changes (sampler, seed, text, latent) and
set seeds, prompt texts, sizes, steps, cfg and ``NODE_ID.INPUT`` overrides on a copy."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

from .errors import ClientError, SpecError
from .files import read_json

SAMPLERS = ("KSampler", "KSamplerAdvanced")


LATENTS = ("EmptySD3LatentImage", "EmptyLatentImage")


def _link_source(prompt: dict, value) -> str | None:
    return str(value[0]) if isinstance(value, list) and len(value) == 2 and str(value[0]) in prompt else None


def vary(workflow: dict, seed: int, text: str | None = None, resolution: tuple[int, int] | None = None) -> dict:
    """A copy of an API workflow with a new seed, positive prompt text and latent size."""
    prompt = copy.deepcopy(workflow)
    samplers = [n for n in prompt.values() if n.get("class_type") in SAMPLERS]
    if not samplers:
        raise ClientError(f"no {' or '.join(SAMPLERS)} in the workflow")
    for node in samplers:
        key = "noise_seed" if "noise_seed" in node["inputs"] else "seed"
        node["inputs"][key] = seed
        if text is not None:
            source = _link_source(prompt, node["inputs"].get("positive"))
            if source is None or prompt[source].get("class_type") != "CLIPTextEncode":
                raise ClientError("--prompts needs a CLIPTextEncode connected to the KSampler's positive input")
            prompt[source]["inputs"]["text"] = text
    if resolution is not None:
        latents = [n for n in prompt.values() if n.get("class_type") in LATENTS]
        if not latents:
            raise ClientError(f"--resolutions needs an {' or '.join(LATENTS)} node")
        for node in latents:
            node["inputs"]["width"], node["inputs"]["height"] = resolution
    return prompt


def set_input(workflow: dict, target: str, value, where: str) -> None:
    """Set ``NODE_ID.INPUT`` of ``workflow`` to ``value``; ``where`` names the option in errors."""
    node_id, dot, name = target.partition(".")
    if not (dot and name) or node_id not in workflow:
        raise ClientError(
            f"{where}: expected NODE_ID.INPUT=VALUE with a node id of the workflow ({', '.join(workflow)})"
        )
    workflow[node_id].setdefault("inputs", {})[name] = value


def apply_sets(workflow: dict, sets: list[str]) -> None:
    """``ID.INPUT=VALUE`` overrides (VALUE parsed as JSON when it can be, else a string)."""
    for item in sets:
        target, sep, raw = item.partition("=")
        if not sep:
            raise ClientError(
                f"--set {item!r}: expected NODE_ID.INPUT=VALUE with a node id of the workflow ({', '.join(workflow)})"
            )
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        set_input(workflow, target, value, f"--set {item!r}")


def load_workflow(path: Path, where: str) -> dict:
    """An API-format workflow; a UI-format one (with "nodes"/"links") gets the export hint."""
    workflow = read_json(path, where)
    if "nodes" in workflow and "links" in workflow:
        raise ClientError(f"{where} {str(path)!r} is a UI workflow; export the API format (Workflow > Export (API))")
    if not workflow or not all(
        isinstance(n, dict) and "class_type" in n and isinstance(n.get("inputs"), dict) for n in workflow.values()
    ):
        raise ClientError(f"{where} {str(path)!r} is not an API-format workflow (each node needs class_type and inputs); "
                          "export it with Workflow > Export (API)")  # fmt: skip
    return workflow


ROLES = {  # role -> (the inputs a node of that role must have (any of), what it is)
    "text": (("text",), "CLIPTextEncode on the sampler's positive input"),
    "latent": (("width",), "EmptySD3LatentImage / EmptyLatentImage node"),
    "seed": (("seed", "noise_seed"), "KSampler / RandomNoise node with a seed"),
    "sampler": (("steps", "cfg"), "KSampler (or the nodes holding steps and cfg)"),
}


@dataclass
class Targets:
    """Node ids that each job edits, per role (see ROLES)."""

    text: list[str]
    latent: list[str]
    seed: list[str]
    sampler: list[str]


def _ids(value, where: str) -> list[str]:
    ids = value if isinstance(value, list) else [value]
    if not ids or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise SpecError(
            f'{where}: {value!r} is not a node id; give a node id of the workflow as a string (e.g. "10") or a list of them'
        )
    return [str(i) for i in ids]


def _default_targets(workflow: dict) -> dict[str, list[str]]:
    """The nodes the client edits when the spec names none (as ``vary`` does)."""
    samplers = [i for i, n in workflow.items() if n.get("class_type") in SAMPLERS]
    texts = []
    for i in samplers:
        source = _link_source(workflow, workflow[i].get("inputs", {}).get("positive"))
        if source and workflow[source].get("class_type") == "CLIPTextEncode" and source not in texts:
            texts.append(source)
    latents = [i for i, n in workflow.items() if n.get("class_type") in LATENTS]
    return {"text": texts, "latent": latents, "seed": samplers, "sampler": samplers}


def find_targets(workflow: dict, nodes: dict | None, need: dict[str, str]) -> Targets:
    """The nodes to edit: ``nodes`` (the spec's "nodes" field) or the defaults.

    ``need`` maps each role the jobs use to the spec field that uses it (e.g. {"text": "prompts"});
    a needed role without a node, or a named node without the role's inputs, is a SpecError."""
    nodes = {} if nodes is None else nodes
    if not isinstance(nodes, dict) or set(nodes) - set(ROLES):
        raise SpecError(
            f"nodes: {json.dumps(nodes)[:200]} must be an object with keys among {', '.join(ROLES)} (each a node id)"
        )
    found = _default_targets(workflow)
    for role, value in nodes.items():
        ids = _ids(value, f"nodes.{role}")
        inputs, what = ROLES[role]
        for i in ids:
            if i not in workflow:
                raise SpecError(
                    f"nodes.{role}: node {i!r} is not in the workflow (its nodes: {', '.join(workflow)}); give the id of its {what}"
                )
            if not set(inputs) & set(workflow[i].get("inputs", {})):
                kind = workflow[i].get("class_type", "?")
                raise SpecError(
                    f"nodes.{role}: node {i!r} ({kind}) has no {' or '.join(inputs)} input; give the id of its {what}"
                )
        found[role] = ids
    for role, used_by in need.items():
        if not found[role]:
            raise SpecError(f"{used_by}: the workflow has no {ROLES[role][1]} to set; give its id in nodes.{role}")
    return Targets(**found)


def apply_job(workflow: dict, targets: Targets, seed=None, text=None, size=None, steps=None, cfg=None) -> dict:
    """A copy of ``workflow`` with the given values set on the target nodes (None leaves a value as is)."""
    prompt = copy.deepcopy(workflow)
    for i in targets.seed if seed is not None else []:
        inputs = prompt[i]["inputs"]
        inputs["noise_seed" if "noise_seed" in inputs else "seed"] = seed
    for i in targets.text if text is not None else []:
        prompt[i]["inputs"]["text"] = text
    for i in targets.latent if size is not None else []:
        prompt[i]["inputs"]["width"], prompt[i]["inputs"]["height"] = size
    for name, value in (("steps", steps), ("cfg", cfg)):
        for i in targets.sampler if value is not None else []:
            if name in prompt[i]["inputs"]:
                prompt[i]["inputs"][name] = value
    return prompt
