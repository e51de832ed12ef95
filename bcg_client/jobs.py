"""Job specs: a spec file (or the quick CLI's options) becomes the list of jobs to run, each with
the prompt it sends and the key that names it in the results and file names. Sizes are parsed by
the warm-up plan's parser (``bcg_runtime.plan``, standard library only), so the client and BCG
Warmup Capture accept the same WIDTHxHEIGHT."""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from bcg_runtime.plan import PlanError
from bcg_runtime.plan import parse_resolutions as plan_resolutions

from .errors import ClientError, SpecError
from .files import read_json
from .workflow import apply_job, apply_sets, find_targets, load_workflow, set_input, vary

MAX_SEED = 0xFFFFFFFFFFFFFFFF


SPEC_FIELDS = ("workflow", "prompts", "seeds", "seed_start", "sizes", "steps", "cfg", "nodes", "set")


@dataclass
class Job:
    """One prompt to run. ``key`` names it in the results and image files; the same prompt gets
    the same key, so --resume recognises it. The rest is its state while the batch runs."""

    key: str
    prompt: dict
    seed: int | None = None
    text: str | None = None
    size: tuple[int, int] | None = None
    status: str = "pending"  # pending | running | done | failed
    server: str | None = None
    prompt_id: str | None = None
    submitted: float = 0.0
    seconds: float | None = None  # from its (last) submission to its end, the wait in the server's queue included
    run_seconds: float | None = None  # what ComfyUI took to execute it (its history's timestamps)
    attempts: list[dict] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    error: str | None = None
    resumed: bool = False
    index: int | None = None  # its place in the spec (None: the key starts with it, as without a spec)
    cached: bool = False  # done, and ComfyUI served it from its cache: no sampling, no DiT call

    @property
    def stem(self) -> str:
        """What its file names start with: ``<index>_<key>``."""
        return self.key if self.index is None else f"{self.index:03d}_{self.key}"

    def record(self) -> dict:
        """The job's entry in the results JSON."""
        w, h = self.size or (None, None)
        keys = (
            "key",
            "status",
            "seed",
            "server",
            "prompt_id",
            "seconds",
            "run_seconds",
            "cached",
            "outputs",
            "images",
            "attempts",
            "error",
        )
        return {**{k: getattr(self, k) for k in keys}, "prompt": self.text, "width": w, "height": h}


@dataclass
class JobSpec:
    """A parsed job spec: the jobs (prompts x seeds x sizes) and what they came from."""

    path: Path
    workflow_path: Path
    jobs: list[Job]
    shape: str  # "3 prompts x 2 seeds x 2 sizes"
    notes: list[str] = field(default_factory=list)  # inputs read as meant, e.g. "sizes: '512' read as 512x512"


def job_key(prompt: dict, seed, size) -> str:
    """``s<seed>_<W>x<H>_<hash>``: readable, and equal exactly for equal prompts."""
    digest = hashlib.sha1(json.dumps(prompt, sort_keys=True).encode()).hexdigest()[:10]
    parts = ([f"s{seed}"] if seed is not None else []) + ([f"{size[0]}x{size[1]}"] if size else []) + [digest]
    return "_".join(parts)


def _number(spec: dict, name: str, kind, low, high, fix: str):
    """spec[name] as ``kind`` within [low, high], None when absent; a SpecError naming the field otherwise."""
    value = spec.get(name)
    if value is None:
        return None
    ok = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
    if not ok or not low <= value <= high:
        raise SpecError(
            f"{name}: {value!r} is not {'a number' if kind is float else 'an integer'} from {low} to {high}; {fix}"
        )
    return value


def _no_duplicates(items: list, name: str) -> None:
    seen = set()
    for item in items:
        if item in seen:
            raise SpecError(f"{name}: {item!r} is listed twice; remove one (each job must differ)")
        seen.add(item)


def parse_prompts(value, base: Path) -> list[str | None]:
    """The "prompts" field: a list of non-empty strings, or a text file (one prompt a line)."""
    if value is None:
        return [None]
    if isinstance(value, str):
        path = base / value
        try:
            prompts = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise SpecError(f"prompts: cannot read {str(path)!r} ({e.strerror if isinstance(e, OSError) else e}); give a list of "
                            "strings or a UTF-8 text file with one prompt per line (relative to the spec's folder)") from None  # fmt: skip
        if not prompts:
            raise SpecError(f"prompts: {str(path)!r} has no prompt; write one prompt per line")
    elif isinstance(value, list) and value and all(isinstance(p, str) and p.strip() for p in value):
        prompts = list(value)
    else:
        raise SpecError(
            f"prompts: {json.dumps(value)[:200]} must be a non-empty list of non-empty strings, or a text file with one prompt per line"
        )
    _no_duplicates(prompts, "prompts")
    return prompts


def parse_seeds(value, start) -> list[int | None]:
    """The "seeds" field: a list of seeds, or a count N -> start .. start+N-1."""
    if value is None:
        return [None]
    fix = f"give a list of seeds (integers 0 to {MAX_SEED}) or a count (e.g. 4)"
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SpecError(f"seeds: {value} is not a count of seeds; {fix}")
        start = 0 if start is None else start
        if start + value - 1 > MAX_SEED:
            raise SpecError(f"seed_start: {start} + {value} seeds passes {MAX_SEED}; lower seed_start")
        return list(range(start, start + value))
    if not isinstance(value, list) or not value:
        raise SpecError(f"seeds: {json.dumps(value)[:200]} is neither a list of seeds nor a count; {fix}")
    for seed in value:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
            raise SpecError(f"seeds: {seed!r} is not a seed; {fix}")
    if start is not None:
        raise SpecError('seed_start: only with a count of seeds ("seeds": 4); remove it or give a count')
    _no_duplicates(value, "seeds")
    return list(value)


def parse_sizes(value, notes: list[str]) -> list[tuple[int, int] | None]:
    """The "sizes" field: a list of "WIDTHxHEIGHT" strings, each read by the warm-up plan's parser
    (its normalisations, e.g. "512" read as 512x512, are added to ``notes``)."""
    if value is None:
        return [None]
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise SpecError(
            f'sizes: {json.dumps(value)[:200]} must be a non-empty list of "WIDTHxHEIGHT" strings (e.g. ["1024x1024"])'
        )
    sizes = []
    for item in value:
        try:
            parsed = plan_resolutions(item, notes, "sizes")
        except PlanError as e:
            raise SpecError(str(e)) from None
        if len(parsed) != 1:
            raise SpecError(f'sizes: {item!r} holds {len(parsed)} sizes; give one "WIDTHxHEIGHT" string per size')
        sizes.append(parsed[0])
    _no_duplicates(sizes, "sizes")
    return sizes


def parse_resolutions(text: str, notes: list[str]) -> list[tuple[int, int]]:
    """The quick CLI's ``--resolutions``: WIDTHxHEIGHT items, comma separated (the warm-up plan's parser)."""
    try:
        return plan_resolutions(text, notes, "--resolutions")
    except PlanError as e:
        raise ClientError(str(e)) from None


def load_spec(path: Path, sets: list[str] = ()) -> JobSpec:
    """Parse and check a job spec (its format: ``bcg_client.cli``'s help) into its jobs; ``sets`` are --set items.

    Every problem is a ClientError (SpecError for a field) whose message names the field and the fix."""
    spec = read_json(path, "job spec")
    unknown = sorted(set(spec) - set(SPEC_FIELDS))
    if unknown:
        raise SpecError(f"{unknown[0]}: not a job spec field; the fields are {', '.join(SPEC_FIELDS)}")
    if not isinstance(spec.get("workflow"), str):
        raise SpecError(
            "workflow: missing; give the path of an API-format workflow JSON (relative to the spec's folder)"
        )
    base = path.parent
    workflow_path = base / spec["workflow"]
    workflow = load_workflow(workflow_path, "workflow")
    apply_sets(workflow, list(sets))
    if not isinstance(spec.get("set", {}), dict):
        raise SpecError('set: must be an object {"NODE_ID.INPUT": value}')
    for target, value in spec.get("set", {}).items():
        set_input(workflow, target, value, f"set {target!r}")
    prompts = parse_prompts(spec.get("prompts"), base)
    start = _number(spec, "seed_start", int, 0, MAX_SEED, "give the first seed")
    seeds = parse_seeds(spec.get("seeds"), start)
    notes: list[str] = []
    sizes = parse_sizes(spec.get("sizes"), notes)
    steps = _number(spec, "steps", int, 1, 10000, "give the sampler's step count, e.g. 8")
    cfg = _number(spec, "cfg", float, 0, 100, "give the guidance scale, e.g. 1.0")
    need = {
        r: f
        for r, f, v in (("text", "prompts", prompts[0]), ("latent", "sizes", sizes[0]), ("seed", "seeds", seeds[0]))
        if v is not None
    }
    if steps is not None or cfg is not None:
        need["sampler"] = "steps" if steps is not None else "cfg"
    targets = find_targets(workflow, spec.get("nodes"), need)
    for name, value in (("steps", steps), ("cfg", cfg)):
        if value is not None and not any(name in workflow[i]["inputs"] for i in targets.sampler):
            raise SpecError(
                f"{name}: none of the sampler nodes ({', '.join(targets.sampler)}) has a {name} input; name the node that has it in nodes.sampler"
            )
    jobs = []
    for index, (text, seed, size) in enumerate(itertools.product(prompts, seeds, sizes)):
        prompt = apply_job(workflow, targets, seed, text, size, steps, cfg)
        jobs.append(Job(job_key(prompt, seed, size), prompt, seed, text, size, index=index))
    shape = " x ".join(
        f"{len(v)} {n}" for n, v in (("prompts", prompts), ("seeds", seeds), ("sizes", sizes)) if v[0] is not None
    )
    return JobSpec(path, workflow_path, jobs, shape or "the workflow as is", notes)


def legacy_jobs(workflow: dict, count: int, seed: int, prompts: list | None, resolutions: list | None) -> list[Job]:
    """The jobs of a run without a spec: copy i gets seed+i and the i-th (cycled) prompt and resolution."""
    prompts, resolutions = prompts or [None], resolutions or [None]
    jobs = []
    for i in range(count):
        text, res = prompts[i % len(prompts)], resolutions[i % len(resolutions)]
        jobs.append(Job(f"{i:03d}_seed{seed + i}", vary(workflow, seed + i, text, res), seed + i, text, res))
    return jobs
