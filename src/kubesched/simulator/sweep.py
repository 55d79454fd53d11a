"""`kubesched sweep SPEC.yaml`: many simulations over a grid or a random sample of variations.

A point varies the base manifests by nodes added from a template (how many, which shape),
the scheduler configuration, a workload scale and the seed (docs/whatif.md has the format).
Each point is one `kubesched.simulate` call. Points run in parallel on this machine's
processes (concurrent.futures), or as Ray tasks on a Ray cluster with `--ray ADDRESS`
(Ray is optional: `pip install 'kubesched[ray]'`). The objects each point needs (base
manifests, templates, configurations) are read and checked once, here, and sent to the
workers once: to every process as it starts, to Ray's object store with `ray.put`.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import signal
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from kubesched.apiserver.documents import DocumentError, parse_documents
from kubesched.config.trust import TRUSTED, UNTRUSTED, Trust
from kubesched.release import DEFAULT, LATEST, Release, ReleaseError, parse_version, release_arguments
from kubesched.simulator.budget import Budget
from kubesched.simulator.inputs import (
    NodeTemplate,
    WhatIfError,
    check_room,
    load_template,
    ordered,
    read_objects,
    scaled,
    simulate_checked,
    utilisation,
)
from kubesched.simulator.load import LoadError, read_text

AXES = ("nodes", "template", "config", "scale", "seed", "kubernetesVersion")
TOP_LEVEL = ("base", "overlays", "template", "config", "seed", "kubernetesVersion", "grid", "sample")
SAMPLE_KEYS = ("n", "randomSeed")
DEFAULT_CONFIG = "default"
MAX_POINTS = 100_000
SPEC_CONFIG_HINT = "give this file to kubesched sweep with --config as well to allow it"
BASE_CONFIG_HINT = "name it as the spec's config and give that file to kubesched sweep with --config to allow it"


@dataclass(frozen=True)
class Point:
    """One variation: `nodes` copies of `template` added, `config` (a name from the spec), scale and seed."""

    index: int
    nodes: int
    template: str | None
    config: str
    scale: float
    seed: int
    kubernetesVersion: str = ""  # the kube-scheduler release, as "1.35" ("": the command's --kubernetes-version)


@dataclass(frozen=True)
class Spec:
    path: str
    base: tuple[str, ...]  # files and directories, resolved against the spec's folder
    points: tuple[Point, ...]
    templates: dict[str, str]  # as the spec names them -> resolved path
    configs: dict[str, str | None]  # as the spec names them -> resolved path (None: upstream's defaults)
    overlays: tuple[str, ...] = ()  # files and directories whose objects replace base's, as --overlay's


@dataclass(frozen=True)
class Context:
    """What every point needs, read once: sent to each worker once."""

    base: list[dict[str, Any]]
    templates: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any] | None]
    taken: frozenset[str]  # node names of the base cluster, which added nodes avoid
    trusted: frozenset[str] = frozenset()  # the configs (as the spec names them) given with --config too
    budget: Budget = Budget()  # every point's, checked before the point's objects are built
    kubernetes_version: str = LATEST  # --kubernetes-version, for points whose spec names none
    feature_gates: str = ""  # --feature-gates, on every point's release


# --- the spec -----------------------------------------------------------------------------------------------


def load_spec(path: str, budget: Budget | None = None) -> Spec:
    """The spec file, checked: every mistake names the file and the field."""
    doc = _spec_document(path, budget or Budget())
    unknown = sorted(set(doc) - set(TOP_LEVEL))
    if unknown:
        raise WhatIfError(f"{path}: {unknown[0]}: unknown field (fields: {', '.join(TOP_LEVEL)})")
    here = Path(path).parent
    base = doc.get("base")
    if isinstance(base, str):
        base = [base]
    if not isinstance(base, list) or not base or not all(isinstance(b, str) and b for b in base):
        raise WhatIfError(f"{path}: base: Required value: the manifests' files or directories, a list of paths")
    overlays = _paths(path, "overlays", doc.get("overlays", []))
    defaults: dict[str, Any] = {
        "nodes": 0,
        "template": _string(path, "template", doc.get("template")),
        "config": _string(path, "config", doc.get("config")) or DEFAULT_CONFIG,
        "scale": 1.0,
        "seed": _integer(path, "seed", doc.get("seed", 0)),
        "kubernetesVersion": _version(path, "kubernetesVersion", doc.get("kubernetesVersion")) or "",
    }
    if "grid" in doc and "sample" in doc:
        raise WhatIfError(f"{path}: grid, sample: give one of them, not both")
    if "grid" in doc:
        points = _grid(path, doc["grid"], defaults)
    elif "sample" in doc:
        points = _sample(path, doc["sample"], defaults)
    else:
        points = [Point(0, **defaults)]
    for p in points:
        if p.nodes and p.template is None:
            raise WhatIfError(f"{path}: template: Required value: adding nodes needs a node template")
    templates = {t: str(here / t) for t in sorted({p.template for p in points if p.template and p.nodes})}
    configs = {c: None if c == DEFAULT_CONFIG else str(here / c) for c in sorted({p.config for p in points})}
    named_paths = (
        ("base", {b: str(here / b) for b in base}),
        ("overlays", {o: str(here / o) for o in overlays}),
        ("template", templates),
        ("config", configs),
    )
    for field_name, named in named_paths:
        for name, resolved in named.items():
            if resolved is not None and not os.path.exists(resolved):
                raise WhatIfError(f"{path}: {field_name}: {name}: no such file or directory ({resolved})")
    resolved_overlays = tuple(str(here / o) for o in overlays)
    return Spec(path, tuple(str(here / b) for b in base), tuple(points), templates, configs, resolved_overlays)


def _paths(path: str, where: str, value: Any) -> list[str]:
    """An optional list of paths (or one path)."""
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(p, str) and p for p in listed):
        raise WhatIfError(f"{path}: {where}: expected a list of files or directories, got {value!r}")
    return listed


def _spec_document(path: str, budget: Budget) -> dict[str, Any]:
    try:
        text = read_text(Path(path), budget.max_input_bytes)
        docs = [d for d in parse_documents(text, max_nodes=budget.max_input_nodes) if d is not None]
    except LoadError as err:
        raise WhatIfError(str(err)) from err
    except DocumentError as err:
        raise WhatIfError(f"{path}: {err}") from err
    if len(docs) != 1 or not isinstance(docs[0], dict):
        found = f"{len(docs)} documents" if len(docs) != 1 else f"a {type(docs[0]).__name__}"
        raise WhatIfError(f"{path}: a sweep spec is one YAML mapping (base, grid or sample, ...), found {found}")
    return docs[0]


def _string(path: str, where: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise WhatIfError(f"{path}: {where}: expected a path, got {value!r}")


def _integer(path: str, where: str, value: Any, low: int | None = None) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and (low is None or value >= low):
        return value
    need = "a non-negative integer" if low == 0 else "an integer"
    raise WhatIfError(f"{path}: {where}: expected {need}, got {value!r}")


def _number(path: str, where: str, value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    raise WhatIfError(f"{path}: {where}: expected a non-negative number, got {value!r}")


def _value(path: str, axis: str, where: str, value: Any) -> Any:
    """One value of an axis, checked."""
    if axis == "nodes":
        return _integer(path, where, value, 0)
    if axis == "seed":
        return _integer(path, where, value)
    if axis == "scale":
        return _number(path, where, value)
    if axis == "kubernetesVersion":
        return _version(path, where, value)
    return _string(path, where, value)


def _version(path: str, where: str, value: Any) -> str | None:
    """A release as "1.35" (a number such as 1.35 is read as its text); None when not given."""
    if value is None:
        return None
    try:
        return parse_version(str(value))
    except ReleaseError as err:
        raise WhatIfError(f"{path}: {where}: {err}") from err


def _mapping(path: str, where: str, value: Any, allowed: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WhatIfError(f"{path}: {where}: expected a mapping of {', '.join(allowed)}")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise WhatIfError(f"{path}: {where}.{unknown[0]}: unknown field (fields: {', '.join(allowed)})")
    return value


def _grid(path: str, grid: Any, defaults: dict[str, Any]) -> list[Point]:
    """Every combination, nodes varying slowest and seed fastest."""
    grid = _mapping(path, "grid", grid, AXES)
    values: list[list[Any]] = []
    for axis in AXES:
        given = grid.get(axis)
        if given is None:
            values.append([defaults[axis]])
            continue
        if not isinstance(given, list) or not given:
            raise WhatIfError(f"{path}: grid.{axis}: expected a non-empty list")
        values.append([_value(path, axis, f"grid.{axis}[{i}]", v) for i, v in enumerate(given)])
    total = 1
    for v in values:
        total *= len(v)
    if total > MAX_POINTS:
        raise WhatIfError(f"{path}: grid: {total} points, more than {MAX_POINTS}")
    return [Point(i, *combo) for i, combo in enumerate(itertools.product(*values))]


def _sample(path: str, sample: Any, defaults: dict[str, Any]) -> list[Point]:
    """`n` points; per axis a list to pick from or a {min, max} range (integers for nodes and seed)."""
    sample = _mapping(path, "sample", sample, (*SAMPLE_KEYS, *AXES))
    n = _integer(path, "sample.n", sample.get("n"), 0)
    if not 0 < n <= MAX_POINTS:
        raise WhatIfError(f"{path}: sample.n: expected 1 to {MAX_POINTS} points, got {n}")
    rng = random.Random(_integer(path, "sample.randomSeed", sample.get("randomSeed", 0)))
    draws = {axis: _draw(path, axis, sample[axis]) for axis in AXES if axis in sample}
    points = []
    for i in range(n):
        values = {axis: draws[axis](rng) if axis in draws else defaults[axis] for axis in AXES}
        points.append(Point(i, **values))
    return points


def _draw(path: str, axis: str, given: Any) -> Any:
    where = f"sample.{axis}"
    if isinstance(given, list) and given:
        choices = [_value(path, axis, f"{where}[{i}]", v) for i, v in enumerate(given)]
        return lambda rng: rng.choice(choices)
    if isinstance(given, dict) and axis in ("nodes", "seed", "scale"):
        bounds = _mapping(path, where, given, ("min", "max"))
        if "min" not in bounds or "max" not in bounds:
            raise WhatIfError(f"{path}: {where}: a range needs min and max")
        low = _value(path, axis, f"{where}.min", bounds["min"])
        high = _value(path, axis, f"{where}.max", bounds["max"])
        if low > high:
            raise WhatIfError(f"{path}: {where}: min {low} is above max {high}")
        if axis == "scale":
            return lambda rng: round(rng.uniform(low, high), 3)
        return lambda rng: rng.randint(low, high)
    shape = "a non-empty list or a {min, max} range" if axis in ("nodes", "seed", "scale") else "a non-empty list"
    raise WhatIfError(f"{path}: {where}: expected {shape}")


def prepare(spec: Spec, trusted_configs: Sequence[str] = (), budget: Budget | None = None) -> Context:
    """Read and check, once, everything the points use: base manifests (overlays in place), templates, configurations.

    A spec is data: a configuration it names may use plugins by import path or extenders only when the
    same file is also given on the command line (`trusted_configs`, sweep's --config)."""
    budget = budget or Budget()
    base = simulate_checked(
        *spec.base,
        overlays=spec.overlays,
        record=False,
        config_trust=UNTRUSTED,
        documents_trust=_BASE,
        budget=budget,
    )
    templates = {name: load_template(p, budget).node for name, p in spec.templates.items()}
    configs: dict[str, dict[str, Any] | None] = {}
    given = {os.path.realpath(c) for c in trusted_configs}
    trusted = frozenset(name for name, p in spec.configs.items() if p is not None and os.path.realpath(p) in given)
    for name, p in spec.configs.items():
        if p is None:
            configs[name] = None
            continue
        simulate_checked(config=p, record=False, config_trust=_trust(name, trusted), budget=budget)
        configs[name] = read_objects([p], budget)[0]
    nodes = frozenset(n.name for n in base.nodes)
    objects = read_objects(spec.base, budget, spec.overlays)
    return Context(objects, templates, configs, nodes, trusted, budget)


_BASE = Trust(hint=BASE_CONFIG_HINT)


def _trust(config: str, trusted: frozenset[str]) -> Trust:
    return TRUSTED if config in trusted else Trust(hint=SPEC_CONFIG_HINT)


# --- running the points -------------------------------------------------------------------------------------


def run_point(context: Context, point: Point) -> dict[str, Any]:
    """One simulation, measured: counts, utilisation per resource, wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    row: dict[str, Any] = asdict(point)
    row["kubernetesVersion"] = point.kubernetesVersion or context.kubernetes_version
    added = point.nodes if point.template is not None else 0
    try:
        check_room(context.base, point.scale, added, context.budget)
        objects = scaled(context.base, point.scale)
        if added and point.template is not None:
            template = NodeTemplate(point.template, context.templates[point.template])
            objects = [*objects, *template.nodes(added, context.taken)]
        config, trust = context.configs[point.config], _trust(point.config, context.trusted)
        sim = simulate_checked(
            objects,
            config=config,
            seed=point.seed,
            record=False,
            config_trust=trust,
            documents_trust=_BASE,
            budget=context.budget,
            kubernetes_version=point.kubernetesVersion or context.kubernetes_version,
            feature_gates=context.feature_gates,
        )
    except WhatIfError as err:
        return {**row, "error": str(err)}
    return {
        **row,
        "pods": len(sim.pods),
        "scheduled": len(sim.scheduled),
        "pending": len(sim.pending),
        "clusterNodes": len(sim.nodes),
        "nodesUsed": sum(1 for n in sim.nodes if n.pods > 0),
        "utilisation": utilisation(sim),
        "wallSeconds": round(time.perf_counter() - wall, 4),
        "cpuSeconds": round(time.process_time() - cpu, 4),
        "error": None,
    }


_CONTEXT: Context | None = None


def _start_worker(context: Context) -> None:
    """A worker process: Ctrl-C is the parent's to handle; the context arrives once."""
    global _CONTEXT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CONTEXT = context


def _in_worker(point: Point) -> dict[str, Any]:
    assert _CONTEXT is not None
    return run_point(_CONTEXT, point)


def run_local(context: Context, points: Sequence[Point], workers: int) -> list[dict[str, Any]]:
    """The points on `workers` processes (in this process when 1), in the spec's order."""
    if workers <= 1 or len(points) <= 1:
        return [run_point(context, p) for p in points]
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(context,))
    try:
        rows = list(pool.map(_in_worker, points))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return rows


def run_ray(
    context: Context, points: Sequence[Point], address: str, workers: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The points as Ray tasks, and the cluster's CPUs: `address` is a cluster's (`auto`, `ray://host:10001`)
    or `local` for a new one on this machine."""
    try:
        import ray
    except ImportError as err:
        raise WhatIfError("--ray: Ray is not installed; install it with: pip install 'kubesched[ray]'") from err
    options: dict[str, Any] = {"address": address, "logging_level": logging.WARNING, "log_to_driver": False}
    if address == "local":
        options["include_dashboard"] = False
        if workers:
            options["num_cpus"] = workers
    try:
        ray.init(**options)
    except Exception as err:  # Ray raises ConnectionError, RuntimeError or ValueError for an address it cannot use
        raise WhatIfError(f"--ray {address}: cannot start or reach Ray: {err}") from err
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        shared = ray.put(context)
        task = ray.remote(run_point)
        return list(ray.get([task.remote(shared, p) for p in points])), cpus
    finally:
        ray.shutdown()


@dataclass
class SweepResult:
    spec: Spec
    rows: list[dict[str, Any]]
    engine: str  # "processes" or "ray"
    workers: int  # processes, or the Ray cluster's CPUs
    wall_seconds: float

    def resources(self) -> list[str]:
        return ordered(r for row in self.rows for r in row.get("utilisation") or {})

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec.path,
            "engine": self.engine,
            "workers": self.workers,
            "wallSeconds": round(self.wall_seconds, 3),
            "points": self.rows,
        }


def sweep(
    spec_path: str,
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    configs: Sequence[str] = (),
    budget: Budget | None = None,
    release: Release = DEFAULT,
) -> SweepResult:
    """The spec's points, run, each within `budget` (a point over it is a row with its error); `configs`
    (--config) are the configuration files trusted to name plugins by import path and extenders, when the
    spec names them too."""
    if workers is not None and workers < 1:
        raise WhatIfError(f"--workers: must be at least 1, got {workers}")
    for c in configs:
        if not os.path.isfile(c):
            raise WhatIfError(f"--config {c}: no such file")
    spec = load_spec(spec_path, budget)
    context = replace(
        prepare(spec, configs, budget),
        kubernetes_version=release.minor,
        feature_gates=release_arguments(release)["feature_gates"],
    )
    start = time.perf_counter()
    if ray_address:
        rows, workers = run_ray(context, spec.points, ray_address, workers)
        engine = "ray"
    else:
        workers = workers or os.cpu_count() or 1
        rows = run_local(context, spec.points, workers)
        engine = "processes"
    return SweepResult(spec, rows, engine, workers, time.perf_counter() - start)
