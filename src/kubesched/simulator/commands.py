"""The simulate, whatif and sweep commands once their arguments are parsed: read, simulate, write.

cli.py parses the command line and hands the arguments here; this is where the simulator's
parts meet (loading, the run, its watchers, every output), so the command line itself
imports none of them. The output is the same bytes whichever entry point runs it.
"""

from __future__ import annotations

import argparse
import socket
import sys
import urllib.parse
from typing import TYPE_CHECKING, TextIO

from kubesched.apiserver.documents import LoadError, read_object_file
from kubesched.config.load import ConfigError, SchedulerConfig
from kubesched.config.trust import TRUSTED, UNTRUSTED
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.release_flags import compared_releases, followed_release
from kubesched.startup import few_full_collections, freeze_survivors, survivors_frozen
from kubesched.userio import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR, AtomicFile, say, silence_stdout

if TYPE_CHECKING:
    from rich.console import Console

    from kubesched.simulator.budget import Budget
    from kubesched.simulator.explain import WorkloadDigest
    from kubesched.simulator.load import LoadedInput
    from kubesched.simulator.progress import RunProgress
    from kubesched.simulator.report import JsonLinesWriter
    from kubesched.simulator.report_html import ScoreCollector
    from kubesched.simulator.run import SimulationResult

EXTENDER_PROBE_TIMEOUT = 2.0  # seconds to wait for an extender's TCP port before the simulation starts


def _scheduler_config(args: argparse.Namespace, loaded: LoadedInput) -> tuple[SchedulerConfig, list[str]]:
    """--config, a configuration among the manifests, or a legacy Policy or algorithm provider."""
    from kubesched.config.legacy import load_algorithm_provider, load_policy, parse_feature_gates
    from kubesched.simulator.run import build_config

    legacy = [
        f
        for f, v in (
            ("--policy-config-file", args.policy_config_file),
            ("--algorithm-provider", args.algorithm_provider),
        )
        if v
    ]
    if not legacy:
        followed = followed_release(
            args.kubernetes_version, args.feature_gates, loaded.cluster_version, say_warnings=False
        )
        config_doc = read_object_file(args.config) if args.config else None
        config = build_config(
            loaded, config_doc, args.config or "", trust=TRUSTED, documents=UNTRUSTED, release=followed
        )
        return config, []
    if args.kubernetes_version is not None:
        raise LoadError(f"{legacy[0]} cannot be combined with --kubernetes-version")
    others = legacy[1:] + (["--config"] if args.config else [])
    if others:
        raise LoadError(f"{legacy[0]} cannot be combined with {', '.join(others)}")
    if loaded.config is not None:
        raise LoadError(f"{legacy[0]} cannot be combined with the KubeSchedulerConfiguration in {loaded.config_source}")
    gates = parse_feature_gates(args.feature_gates)
    if args.policy_config_file:
        doc = read_object_file(args.policy_config_file, "Policy")
        result = load_policy(doc, source=args.policy_config_file, gates=gates)
        return result.config, [f"{args.policy_config_file}: {w}" for w in result.warnings]
    result = load_algorithm_provider(args.algorithm_provider, gates=gates)
    return result.config, result.warnings


def check_extenders(config: SchedulerConfig) -> None:
    """Every extender the simulation cannot do without must accept a connection before anything runs."""
    for i, ext in enumerate(config.raw.extenders):
        if ext.ignorable:
            continue
        try:
            url = urllib.parse.urlsplit(ext.urlPrefix if "://" in ext.urlPrefix else "http://" + ext.urlPrefix)
            port = url.port or (443 if url.scheme == "https" or ext.enableHTTPS else 80)
            with socket.create_connection((url.hostname or "", port), timeout=EXTENDER_PROBE_TIMEOUT):
                pass
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err) or type(err).__name__
            source = f"{config.source}: " if config.source else ""
            raise LoadError(f"{source}extenders[{i}].urlPrefix: cannot connect to {ext.urlPrefix!r}: {reason}") from err


def _config_source(args: argparse.Namespace, loaded: LoadedInput | None) -> str:
    if args.config:
        return str(args.config)
    if args.policy_config_file:
        return str(args.policy_config_file)
    return loaded.config_source if loaded is not None else ""


def simulate_command(args: argparse.Namespace, budget: Budget) -> int:
    try:
        report = _report_file(args.report) if args.report is not None else None  # before the run, as snapshot -o
    except LoadError as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    try:
        with few_full_collections(), survivors_frozen():
            return _simulate(args, budget, report)
    finally:
        if report is not None:
            report.discard()


def _simulate(args: argparse.Namespace, budget: Budget, report: AtomicFile | None = None) -> int:
    from kubesched.simulator.explain import ExplainError, WorkloadDigest, target
    from kubesched.simulator.load import load_manifests
    from kubesched.simulator.report import JsonLinesWriter
    from kubesched.simulator.run import Watcher, simulate

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    loaded: LoadedInput | None = None
    progress = None
    try:
        explain = [target(name).key for name in args.explain]
        loaded = load_manifests(args.files, args.overlay, budget=budget)
        freeze_survivors()  # the command simulates once: what is alive now lives as long as its result
        config, config_warnings = _scheduler_config(args, loaded)
        check_extenders(config)
        # The per-plugin record costs time and memory: only what the output shows is kept.
        full = args.record == "full" and output != "table"
        stream = JsonLinesWriter(sys.stdout, record=full, keep=explain) if output == "jsonl" else None
        progress = None if args.quiet else _progress()
        # --report counts every cycle's scores as the run goes (before the stream drops its records); when the
        # output keeps no record, cycles keep a scores-only record for it (docs/report.md).
        scores = _score_collector(output, explain) if report is not None and args.record == "full" else None
        digest = WorkloadDigest(explain, drop=not (full and output == "json"))  # after those that read records
        watchers: list[Watcher] = [w for w in (scores, stream, digest, progress) if w is not None]
        result = simulate(
            loaded,
            config,
            seed=args.seed,
            record=True if full else explain,
            scores_only=scores is not None and not full,
            until=args.until,
            bind_latency=args.bind_latency,
            watchers=watchers,
            settled=freeze_survivors,
        )
    except (LoadError, ConfigError, ExplainError) as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    except FrameworkError as err:
        say(f"{err.located(_config_source(args, loaded))}")
        return EXIT_BAD_INPUT
    finally:
        if progress is not None:
            progress.close()
    assert result.scheduler is not None
    for warning in [*config_warnings, *result.warnings]:
        say(f"warning: {warning}")
    freeze_survivors()
    code = _write(result, output, sys.stdout, record=full, explain=args.explain, stream=stream, digest=digest)
    if report is not None:
        code = _write_report(report, args, result, scores, _config_source(args, loaded)) or code
    return code


def _report_file(path: str) -> AtomicFile:
    """--report's file, made now (a temporary beside it) so that neither a missing plotting library nor a
    path that cannot be written costs a whole run first."""
    from kubesched.simulator.report_html import ReportError, require_plotting

    try:
        require_plotting()
        return AtomicFile(path)
    except ReportError as err:
        raise LoadError(str(err)) from err
    except OSError as err:
        raise LoadError(f"--report: cannot write {path}: {err.strerror or err}") from err


def _score_collector(output: str, explain: list[str]) -> ScoreCollector:
    from kubesched.simulator.report_html import ScoreCollector

    return ScoreCollector(drop=output == "table", keep=explain)


def _write_report(
    target: AtomicFile,
    args: argparse.Namespace,
    result: SimulationResult,
    scores: ScoreCollector | None,
    config_source: str,
) -> int:
    """--report PATH, after the output: written whole or not at all; 1 when it cannot be written."""
    from kubesched.simulator import report_html

    details = [("Input", " ".join(args.files + [f"--overlay {o}" for o in args.overlay]))]
    if args.seed is not None:
        details.append(("Seed", str(args.seed)))
    data = report_html.from_result(
        result,
        scores.stats if scores is not None else None,
        title="kubesched simulate report",
        config_source=config_source,
        details=details,
    )
    try:
        text = report_html.render(data)
        target.write(lambda f: print(text, end="", file=f))
    except OSError as err:
        say(f"--report: cannot write {args.report}: {err.strerror or err}")
        return EXIT_INTERNAL_ERROR
    return 0


def _progress() -> RunProgress | None:
    """A progress bar on standard error when it is a terminal, else None."""
    from kubesched.simulator.progress import RunProgress

    console = _stderr_console()
    return RunProgress(console) if console.is_terminal else None


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _write(
    result: SimulationResult,
    output: str,
    out: TextIO,
    *,
    record: bool,
    explain: list[str] | None = None,
    stream: JsonLinesWriter | None = None,
    digest: WorkloadDigest | None = None,
) -> int:
    """Print the result; a reader that goes away early (`| head`) ends the command quietly.

    --explain goes to standard output instead of the pods and nodes tables with table output,
    to standard error with json and jsonl (standard output keeps the one JSON document or stream).
    """
    from kubesched.simulator import explain as ex
    from kubesched.simulator.report import console_for, print_table, table_document, to_json, write_json
    from kubesched.simulator.states import pod_states
    from kubesched.simulator.summary import summarize

    try:
        explained = ex.explain_all(result, explain, digest) if explain else []
    except ex.ExplainError as err:
        say(f"{err}")
        if stream is not None:
            stream.finish(result)
        return EXIT_BAD_INPUT
    try:
        if stream is not None:
            stream.finish(result)
        elif output == "json":
            write_json(to_json(result, record=record), out)
            out.write("\n")
        elif explained:
            ex.render(explained, console_for(out))
            states = list(pod_states(result))
            print_table(table_document(result, summarize(result, states), states), out, pods=False)
        else:
            states = list(pod_states(result))
            summary = summarize(result, states)
            print_table(table_document(result, summary, states), out, shown=summary.shown())
        out.flush()
    except BrokenPipeError:
        silence_stdout()
        return 0
    if explained and output != "table":
        ex.render(explained, _stderr_console())
    return 0


def whatif_command(args: argparse.Namespace, budget: Budget) -> int:
    from kubesched.simulator import whatif, whatif_output
    from kubesched.simulator.inputs import WhatIfError

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    try:
        if args.question == "capacity":
            followed = followed_release(args.kubernetes_version, args.feature_gates)
            answer = whatif.capacity(
                args.files,
                args.node_template,
                config=args.config,
                max_nodes=args.max_nodes,
                seed=args.seed,
                budget=budget,
                overlays=args.overlay,
                release=followed,
            )
        else:
            comparison = whatif.compare(
                args.files,
                args.configs,
                seed=args.seed,
                budget=budget,
                overlays=args.overlay,
                releases=compared_releases(args.kubernetes_version, args.feature_gates),
            )
    except (WhatIfError, LoadError) as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    if output == "json":
        doc = answer.to_json() if args.question == "capacity" else comparison.to_json()
        whatif_output.write_json(doc, sys.stdout)
    elif args.question == "capacity":
        whatif_output.print_capacity(answer, sys.stdout)
    else:
        whatif_output.print_comparison(comparison, sys.stdout)
    sys.stdout.flush()
    return 0


def sweep_command(args: argparse.Namespace, budget: Budget) -> int:
    from kubesched.simulator import sweep, whatif_output
    from kubesched.simulator.inputs import WhatIfError

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    try:
        result = sweep.sweep(
            args.spec,
            workers=args.workers,
            ray_address=args.ray,
            configs=args.configs,
            budget=budget,
            release=followed_release(args.kubernetes_version, args.feature_gates),
        )
    except (WhatIfError, LoadError) as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    if output == "json":
        whatif_output.write_json(result.to_json(), sys.stdout)
    elif output == "csv":
        whatif_output.write_csv(result, sys.stdout)
    else:
        whatif_output.print_sweep(result, sys.stdout)
    sys.stdout.flush()
    failed = sum(1 for row in result.rows if row.get("error"))
    where = f"{result.workers} process(es)" if result.engine == "processes" else f"Ray ({result.workers} CPUs)"
    summary = f"{len(result.rows)} point(s) in {result.wall_seconds:.1f} s on {where}"
    say(f"sweep: {summary}" + (f"; {failed} failed" if failed else ""))
    return 0
