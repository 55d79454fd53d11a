"""Command line: `kubesched simulate FILE... [--config C] [--output json|table] [--seed N] [--record full|none]`."""

from __future__ import annotations

import argparse
import errno
import gc
import json
import logging
import os
import secrets
import socket
import stat
import sys
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from kubesched import klog
from kubesched.api.duration import parse_duration
from kubesched.config.load import ConfigError, SchedulerConfig, load_config
from kubesched.config.trust import TRUSTED, UNTRUSTED
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.simulator.documents import LoadError, read_object_file
from kubesched.startup import without_gc

# The simulation, its report (rich) and legacy policies are imported where simulate uses them:
# `kubesched run` restarts faster without them.
if TYPE_CHECKING:
    from rich.console import Console

    from kubesched.features import FeatureGates
    from kubesched.simulator.budget import Budget
    from kubesched.simulator.explain import WorkloadDigest
    from kubesched.simulator.load import LoadedInput
    from kubesched.simulator.progress import RunProgress
    from kubesched.simulator.report import JsonLinesWriter
    from kubesched.simulator.report_html import ScoreCollector
    from kubesched.simulator.run import SimulationResult

KUBERNETES_VERSION = "v1.36"  # the kube-scheduler release kubesched follows
EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 1
EXTENDER_PROBE_TIMEOUT = 2.0  # seconds to wait for an extender's TCP port before the simulation starts


def version_text() -> str:
    """`kubesched <version> (Kubernetes <release>)`, the version from the installed package's metadata."""
    import importlib.metadata  # here, not at start-up: only --version reads package metadata

    try:
        version = importlib.metadata.version("kubesched")
    except importlib.metadata.PackageNotFoundError:
        version = "(not installed)"
    return f"kubesched {version} (Kubernetes {KUBERNETES_VERSION})"


class _VersionAction(argparse.Action):
    """argparse's version action, with the version looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_text())
        parser.exit()


# Control characters a user's input may carry (other than newline and tab), escaped as Go's %q does,
# so one message stays one line where it should (str.splitlines splits at \x1c-\x1e, \x85, \u2028 too).
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), 0x7F, 0x85)} | {
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _say(message: str) -> None:
    """A message for the user on standard error, prefixed with the command's name."""
    print("kubesched: " + message.translate(_ESCAPES), file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kubesched", description="Kubernetes kube-scheduler, in Python.")
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("simulate", help="schedule manifests on an embedded in-memory cluster")
    s.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories; - reads stdin")
    _overlay_arg(s)
    s.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    s.add_argument(
        "--policy-config-file",
        metavar="FILE",
        help="a legacy scheduler Policy (JSON or YAML), translated as kube-scheduler 1.19-1.22 did",
    )
    s.add_argument(
        "--algorithm-provider",
        metavar="NAME",
        help="a legacy algorithm provider: DefaultProvider or ClusterAutoscalerProvider",
    )
    s.add_argument(
        "--feature-gates",
        default="",
        metavar="GATES",
        help="kube-scheduler's A=true,B=false (v1.36 gates, e.g. GenericWorkload,GangScheduling: "
        "docs/workload-aware.md); with --policy-config-file/--algorithm-provider: DefaultPodTopologySpread=true|false",
    )
    s.add_argument(
        "--output",
        choices=("json", "jsonl", "table"),
        default=None,
        help="default: table on a terminal, else json; jsonl streams one JSON object a line (docs/output.md)",
    )
    s.add_argument("--seed", type=int, default=None, help="fix the random tie-break in host selection")
    s.add_argument(
        "--record", choices=("full", "none"), default="full", help="none leaves out per-plugin records (json, jsonl)"
    )
    s.add_argument(
        "--explain",
        action="append",
        default=[],
        metavar="[NAMESPACE/][KIND/]NAME",
        help="show how the pod's last attempt judged every node; with KIND (deployment, sts, ds, job, cj, rs, rc, "
        "...: kubectl's names), the workload's pods by outcome (repeatable; no NAMESPACE: default)",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar on standard error")
    s.add_argument(
        "--report",
        metavar="PATH",
        help="also write an HTML report with plots to PATH (self-contained, readable offline; docs/report.md)",
    )
    s.add_argument("--until", type=_duration, default=None, help="stop at this virtual time (e.g. 10m)")
    s.add_argument(
        "--bind-latency", type=_duration, default=0.0, help="virtual time a binding takes (e.g. 200ms; default 0)"
    )
    s.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(s)
    _run_parser(sub)
    snap = sub.add_parser("snapshot", help="write a cluster's nodes, pods and other objects as manifests for simulate")
    _cluster_args(
        snap,
        "default, as kubectl: the first existing file in $KUBECONFIG (kubectl merges them all), "
        "else ~/.kube/config if it exists, else in-cluster credentials",
    )
    snap.add_argument(
        "-o",
        "--output",
        default="-",
        help="file to write (default: stdout); checked before the cluster is read, written whole or not at all",
    )
    snap.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _whatif_parser(sub)
    _sweep_parser(sub)
    _ui_parser(sub)
    return p


def _overlay_arg(p: argparse.ArgumentParser) -> None:
    """--overlay, the same on every command that reads manifests: a snapshot plus a what-if file."""
    p.add_argument(
        "--overlay",
        action="append",
        default=[],
        metavar="FILE",
        help="a file or directory like FILE whose objects replace those of the same kind, namespace and name "
        "in the FILEs (each replacement is warned about) or are added; repeatable",
    )


def _ui_parser(sub: argparse._SubParsersAction) -> None:
    u = sub.add_parser(
        "ui", help="a local web app: the cluster, pending pods and why, every plugin's verdicts; edit and re-run"
    )
    u.add_argument("files", nargs="+", metavar="FILE", help="YAML or JSON files or directories")
    _overlay_arg(u)
    u.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    u.add_argument("--host", default="127.0.0.1", help="address to serve on (default: loopback only)")
    u.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name the page is reached by (a proxy's, a DNS alias); repeatable",
    )
    u.add_argument(
        "--token", default=None, help="the access token (default: $KUBESCHED_UI_TOKEN, else random off loopback)"
    )
    u.add_argument("--require-token", action="store_true", help="need a token on loopback too")
    u.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    u.add_argument("--no-open", action="store_true", help="do not open a browser")
    u.add_argument("--seed", type=int, default=1, help="the random tie-break's seed (default 1)")
    u.add_argument("--until", type=_duration, default=None, help="stop at this virtual time (e.g. 10m)")
    u.add_argument("--bind-latency", type=_duration, default=0.0, help="virtual time a binding takes")
    u.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(u)


def _run_parser(sub: argparse._SubParsersAction) -> None:
    """kube-scheduler's own flags where they exist; --kubeconfig/--kube-api-* override clientConnection."""
    r = sub.add_parser("run", help="schedule the pods of a real cluster (kubeconfig or in-cluster credentials)")
    r.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    r.add_argument(
        "--feature-gates",
        default="",
        metavar="GATES",
        help="kube-scheduler's A=true,B=false (v1.36 gates, e.g. GenericWorkload,GangScheduling)",
    )
    _cluster_args(
        r,
        "default: clientConnection.kubeconfig, else in-cluster credentials; "
        "as kube-scheduler, $KUBECONFIG and ~/.kube/config are not read",
    )
    r.add_argument("--kube-api-qps", type=float, default=None, help="client-side requests per second (default 50)")
    r.add_argument("--kube-api-burst", type=int, default=None, help="client-side burst (default 100)")
    r.add_argument("--leader-elect", type=_bool, default=None, metavar="true|false", help="default: true")
    r.add_argument("--leader-elect-lease-duration", type=_duration, default=None, metavar="DURATION")
    r.add_argument("--leader-elect-renew-deadline", type=_duration, default=None, metavar="DURATION")
    r.add_argument("--leader-elect-retry-period", type=_duration, default=None, metavar="DURATION")
    r.add_argument("--leader-elect-resource-lock", default="leases", choices=("leases",))
    r.add_argument("--leader-elect-resource-name", default=None, metavar="NAME")
    r.add_argument("--leader-elect-resource-namespace", default=None, metavar="NAMESPACE")
    r.add_argument("--bind-address", default="0.0.0.0", help="address for the secure port")
    r.add_argument(
        "--secure-port", type=_secure_port, default=10259, help="HTTPS port for /healthz and /metrics; 0: none"
    )
    r.add_argument("--cert-dir", default="", help="where the self-signed certificate is written")
    r.add_argument("--tls-cert-file", default="")
    r.add_argument("--tls-private-key-file", default="")
    _delegation_args(r)
    r.add_argument(
        "--record-annotations",
        action="store_true",
        help="write each attempt's per-plugin results onto the pod (kube-scheduler-simulator's keys)",
    )
    r.add_argument("--logging-format", choices=("text", "json"), default="text")
    r.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")


def _delegation_args(r: argparse.ArgumentParser) -> None:
    """Who may read the secure port: kube-scheduler's delegated authentication and authorization flags."""
    on = {"nargs": "?", "const": True, "metavar": "true|false"}
    r.add_argument(
        "--authentication-kubeconfig",
        default="",
        help="kubeconfig for TokenReviews and the client CA lookup; default: in-cluster credentials, else none",
    )
    r.add_argument(
        "--authorization-kubeconfig", default="", help="kubeconfig for SubjectAccessReviews; default as above"
    )
    r.add_argument(
        "--authorization-always-allow-paths",
        type=_paths,
        default=("/healthz", "/readyz", "/livez"),
        metavar="PATHS",
        help="comma-separated paths served without authorization (default /healthz,/readyz,/livez)",
    )
    r.add_argument("--authentication-skip-lookup", type=_bool, default=False, **on)  # type: ignore[arg-type]
    r.add_argument("--authentication-tolerate-lookup-failure", type=_bool, default=True, **on)  # type: ignore[arg-type]
    r.add_argument("--client-ca-file", default="", help="CA bundle verifying client certificates (user CN, groups O)")
    for flag in (
        "--authentication-token-webhook-cache-ttl",
        "--authorization-webhook-cache-authorized-ttl",
        "--authorization-webhook-cache-unauthorized-ttl",
    ):
        r.add_argument(flag, type=_duration, default=10.0, metavar="DURATION", help="default 10s")


def _paths(text: str) -> tuple[str, ...]:
    """A string slice flag as pflag reads it: comma-separated, empty for none."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _delegation_options(args: argparse.Namespace) -> Any:
    from kubesched.delegation import DelegationOptions

    return DelegationOptions(
        authentication_kubeconfig=args.authentication_kubeconfig,
        authorization_kubeconfig=args.authorization_kubeconfig,
        always_allow_paths=args.authorization_always_allow_paths,
        skip_lookup=args.authentication_skip_lookup,
        tolerate_lookup_failure=args.authentication_tolerate_lookup_failure,
        client_ca_file=args.client_ca_file,
        token_cache_ttl=args.authentication_token_webhook_cache_ttl,
        allowed_cache_ttl=args.authorization_webhook_cache_authorized_ttl,
        denied_cache_ttl=args.authorization_webhook_cache_unauthorized_ttl,
    )


def _budget_args(p: argparse.ArgumentParser) -> None:
    """The simulation's budget (simulator/budget.py): raise it for inputs larger than the defaults admit."""
    from kubesched.simulator.budget import DEFAULT_MAX_INPUT_BYTES, DEFAULT_MAX_OBJECTS, DEFAULT_MAX_PODS

    p.add_argument(
        "--max-pods",
        type=_count,
        default=DEFAULT_MAX_PODS,
        metavar="N",
        help=f"the most pods a simulation may hold, listed and made by workloads (default {DEFAULT_MAX_PODS})",
    )
    p.add_argument(
        "--max-objects",
        type=_count,
        default=DEFAULT_MAX_OBJECTS,
        metavar="N",
        help=f"the most objects a simulation may hold, read and made (default {DEFAULT_MAX_OBJECTS})",
    )
    p.add_argument(
        "--max-input-bytes",
        type=_count,
        default=DEFAULT_MAX_INPUT_BYTES,
        metavar="N",
        help=f"the most bytes of one input: a file, a pipe, stdin, a UI edit (default {DEFAULT_MAX_INPUT_BYTES})",
    )


def _budget(args: argparse.Namespace) -> Budget:
    from kubesched.simulator.budget import Budget

    return Budget(max_pods=args.max_pods, max_objects=args.max_objects, max_input_bytes=args.max_input_bytes)


def _count(text: str) -> int:
    """A budget: a whole number, 0 or more."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: expected a whole number, 0 or more")
    return value


def _cluster_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--kubeconfig", default="", help=f"path to a kubeconfig; {default}")
    p.add_argument("--master", default="", help="the API server's address (overrides the kubeconfig's)")


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "t"):
        return True
    if text.lower() in ("false", "0", "f"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r}")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from err


def _secure_port(text: str) -> int:
    """--secure-port, refused out of range in kube-scheduler's words (SecureServingOptions.Validate)."""
    port = _integer(text)
    if port < 0:
        raise argparse.ArgumentTypeError(
            f"--secure-port {port} must be between 0 and 65535, inclusive. 0 for turning off secure port"
        )
    if port > 65535:
        raise argparse.ArgumentTypeError(
            f"--secure-port {port} must be between 1 and 65535, inclusive. It cannot be turned off with 0"
        )
    return port


def _verbosity(text: str) -> int:
    """-v: klog's level, an unsigned number."""
    level = _integer(text)
    if level < 0:
        raise argparse.ArgumentTypeError(f"{level}: the log verbosity is 0 or more")
    return level


def _feature_gates(text: str, warnings: list[str]) -> FeatureGates:
    """--feature-gates as kube-scheduler v1.36 takes it; unknown gates only warned about, as it does."""
    from kubesched.features import FeatureGateError, parse_feature_gates

    found: list[str] = []
    try:
        gates = parse_feature_gates(text, found)
    except FeatureGateError as err:
        raise LoadError(f"--feature-gates: {err}") from err
    warnings.extend(f"--feature-gates: {w}" for w in found)
    return gates


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _scheduler_config(args: argparse.Namespace, loaded: LoadedInput) -> tuple[SchedulerConfig, list[str]]:
    """--config, a configuration among the manifests, or a legacy Policy or algorithm provider."""
    from kubesched.config.legacy import FEATURE_GATES, load_algorithm_provider, load_policy, parse_feature_gates
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
        if any(
            g.partition("=")[0].strip().removeprefix("kube:") in FEATURE_GATES for g in args.feature_gates.split(",")
        ):
            raise LoadError(
                f"--feature-gates only applies with --policy-config-file or --algorithm-provider for "
                f"{', '.join(FEATURE_GATES)} (a gate kube-scheduler v1.36 no longer has)"
            )
        warnings: list[str] = []
        gates = _feature_gates(args.feature_gates, warnings)
        config_doc = read_object_file(args.config) if args.config else None
        config = build_config(loaded, config_doc, args.config or "", trust=TRUSTED, documents=UNTRUSTED, gates=gates)
        return config, warnings
    others = legacy[1:] + (["--config"] if args.config else [])
    if others:
        raise LoadError(f"{legacy[0]} cannot be combined with {', '.join(others)}")
    if loaded.config is not None:
        raise LoadError(f"{legacy[0]} cannot be combined with the KubeSchedulerConfiguration in {loaded.config_source}")
    legacy_gates = parse_feature_gates(args.feature_gates)
    if args.policy_config_file:
        doc = read_object_file(args.policy_config_file, "Policy")
        result = load_policy(doc, source=args.policy_config_file, gates=legacy_gates)
        return result.config, [f"{args.policy_config_file}: {w}" for w in result.warnings]
    result = load_algorithm_provider(args.algorithm_provider, gates=legacy_gates)
    return result.config, result.warnings


def _check_extenders(config: SchedulerConfig) -> None:
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


FULL_COLLECTION_THRESHOLD = 1000
"""simulate's third GC threshold. A simulation makes almost no cyclic garbage (young collections
take what there is), but its heap of parsed objects keeps growing, and every full collection
walked all of it: a tenth of the CPU time at 50000 pods. One full collection per thousand young
ones (Python's default is ten) leaves that out."""


def simulate_command(args: argparse.Namespace) -> int:
    try:
        report = _report_file(args.report) if args.report is not None else None  # before the run, as snapshot -o
    except LoadError as err:
        _say(f"{err}")
        return EXIT_BAD_INPUT
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], FULL_COLLECTION_THRESHOLD)
    try:
        return _simulate(args, report)
    finally:
        gc.set_threshold(*thresholds)
        if report is not None:
            report.discard()


def _simulate(args: argparse.Namespace, report: _OutputFile | None = None) -> int:
    from kubesched.simulator.explain import ExplainError, WorkloadDigest, target
    from kubesched.simulator.load import load_manifests
    from kubesched.simulator.report import JsonLinesWriter
    from kubesched.simulator.run import Watcher, simulate

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    loaded: LoadedInput | None = None
    progress = None
    try:
        explain = [target(name).key for name in args.explain]
        loaded = load_manifests(args.files, args.overlay, budget=_budget(args))
        config, config_warnings = _scheduler_config(args, loaded)
        _check_extenders(config)
        # The per-plugin record costs time and memory: only what the output shows is kept.
        full = args.record == "full" and output != "table"
        stream = JsonLinesWriter(sys.stdout, record=full, keep=explain) if output == "jsonl" else None
        progress = None if args.quiet else _progress()
        # --report counts every cycle's scores as the run goes (before the stream drops its records).
        scores = _score_collector(output, explain) if report is not None and args.record == "full" else None
        digest = WorkloadDigest(explain, drop=not (full and output == "json"))  # after those that read records
        watchers: list[Watcher] = [w for w in (scores, stream, digest, progress) if w is not None]
        result = simulate(
            loaded,
            config,
            seed=args.seed,
            record=True if full or scores is not None else explain,
            until=args.until,
            bind_latency=args.bind_latency,
            watchers=watchers,
        )
    except (LoadError, ConfigError, ExplainError) as err:
        _say(f"{err}")
        return EXIT_BAD_INPUT
    except FrameworkError as err:
        _say(f"{_framework_message(err, _config_source(args, loaded))}")
        return EXIT_BAD_INPUT
    finally:
        if progress is not None:
            progress.close()
    assert result.scheduler is not None
    for warning in [*config_warnings, *result.warnings]:
        _say(f"warning: {warning}")
    code = _write(result, output, sys.stdout, record=full, explain=args.explain, stream=stream, digest=digest)
    if report is not None:
        code = _write_report(report, args, result, scores, _config_source(args, loaded)) or code
    return code


def _report_file(path: str) -> _OutputFile:
    """--report's file, made now (a temporary beside it) so that neither a missing plotting library nor a
    path that cannot be written costs a whole run first."""
    from kubesched.simulator.report_html import ReportError, require_plotting

    try:
        require_plotting()
        return _OutputFile(path)
    except ReportError as err:
        raise LoadError(str(err)) from err
    except OSError as err:
        raise LoadError(f"--report: cannot write {path}: {err.strerror or err}") from err


def _score_collector(output: str, explain: list[str]) -> ScoreCollector:
    from kubesched.simulator.report_html import ScoreCollector

    return ScoreCollector(drop=output == "table", keep=explain)


def _write_report(
    target: _OutputFile,
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
        _say(f"--report: cannot write {args.report}: {err.strerror or err}")
        return EXIT_INTERNAL_ERROR
    return 0


def _framework_message(err: FrameworkError, source: str) -> str:
    """A profile that cannot be built: the configuration file, the field, then upstream's text."""
    return err.located(source)


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
    from kubesched.simulator.report import console_for, print_table, to_json, write_json
    from kubesched.simulator.summary import summarize

    try:
        explained = ex.explain_all(result, explain, digest) if explain else []
    except ex.ExplainError as err:
        _say(f"{err}")
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
            print_table(to_json(result, record=False), out, pods=False)
        else:
            summary = summarize(result)
            print_table(to_json(result, record=False, summary=summary), out, shown=summary.shown())
        out.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 0
    if explained and output != "table":
        ex.render(explained, _stderr_console())
    return 0


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def run_command(args: argparse.Namespace) -> int:
    from kubesched.app import RunOptions, SchedulerApp
    from kubesched.backend.kube.api import ClientConfigError
    from kubesched.delegation import DelegationError

    try:
        gate_warnings: list[str] = []
        gates = _feature_gates(args.feature_gates, gate_warnings)
        for warning in gate_warnings:
            _say(warning)
        config = load_config(
            read_object_file(args.config) if args.config else None, source=args.config or "", trust=TRUSTED, gates=gates
        )
        opts = RunOptions(
            kubeconfig=args.kubeconfig,
            master=args.master,
            qps=args.kube_api_qps,
            burst=args.kube_api_burst,
            leader_elect=args.leader_elect,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            lease_name=args.leader_elect_resource_name,
            lease_namespace=args.leader_elect_resource_namespace,
            bind_address=args.bind_address,
            secure_port=args.secure_port if args.secure_port > 0 else -1,
            cert_dir=args.cert_dir,
            tls_cert_file=args.tls_cert_file,
            tls_private_key_file=args.tls_private_key_file,
            delegation=_delegation_options(args),
            record_annotations=args.record_annotations,
            verbosity=args.verbosity,
        )
        with without_gc():
            app = SchedulerApp(config, opts)
    except (LoadError, ConfigError) as err:
        _say(f"{err}")
        return EXIT_BAD_INPUT
    except FrameworkError as err:
        _say(f"{_framework_message(err, args.config or '')}")
        return EXIT_BAD_INPUT
    except (ClientConfigError, DelegationError) as err:
        _say(f"{err}")
        return EXIT_BAD_INPUT
    except Exception as err:  # no credentials, unreadable kubeconfig
        _say(f"cannot reach the cluster: {err}")
        return EXIT_BAD_INPUT
    app.install_signal_handlers()
    return app.run()


def snapshot_command(args: argparse.Namespace) -> int:
    from kubesched.backend.kube.api import APIError, CredentialsError, KubeAPI, describe, load_configuration
    from kubesched.backend.kube.snapshot import take_snapshot, write_manifests

    try:
        target = None if args.output == "-" else _OutputFile(args.output)
    except OSError as err:
        _say(f"snapshot: cannot write {args.output}: {err.strerror or err}")
        return EXIT_BAD_INPUT
    try:
        try:
            api = KubeAPI(load_configuration(args.kubeconfig, args.master, kubectl_defaults=True), qps=0)
        except CredentialsError as err:
            _say(f"snapshot: {err}")
            return EXIT_BAD_INPUT
        except Exception as err:  # an unreadable kubeconfig
            _say(f"cannot reach the cluster: {err}")
            return EXIT_BAD_INPUT
        try:
            objects = take_snapshot(api)
        except APIError as err:  # no answer, an untrusted server, refused credentials or rights
            _say(f"snapshot: {describe(err, api.host)}")
            return 1
        try:
            if target is None:
                write_manifests(objects, sys.stdout)
                sys.stdout.flush()
            else:
                target.write(lambda f: write_manifests(objects, f))
        except BrokenPipeError:
            _silence_stdout()
            return 0
        except OSError as err:
            _say(f"snapshot: cannot write {args.output}: {err.strerror or err}")
            return 1
    finally:
        if target is not None:
            target.discard()
    counts: dict[str, int] = {}
    for obj in objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    print("kubesched: snapshot: " + ", ".join(f"{n} {k}" for k, n in counts.items()), file=sys.stderr)
    return 0


class _OutputFile:
    """A file written whole or not at all: a temporary file beside it, made at once (so a path that cannot
    be written fails before any work) and renamed over it at the end. Raises OSError naming the reason."""

    def __init__(self, path: str) -> None:
        real = os.path.realpath(path)  # through a symbolic link: the file it names is replaced
        if os.path.isdir(real):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        parent = os.path.dirname(real) or "."
        if not os.path.isdir(parent):
            reason = "No such directory" if not os.path.exists(parent) else "Not a directory"
            raise FileNotFoundError(errno.ENOENT, f"{reason}: {os.path.dirname(path) or parent}")
        if os.path.exists(real) and not os.access(real, os.W_OK):
            raise PermissionError(errno.EACCES, "Permission denied")
        mode = stat.S_IMODE(os.stat(real).st_mode) if os.path.exists(real) else 0o666
        self.path = real
        self.temp = os.path.join(parent, f".{os.path.basename(real)}.{secrets.token_hex(4)}.tmp")
        fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.close(fd)
        if os.path.exists(real):
            os.chmod(self.temp, mode)

    def write(self, fill: Callable[[TextIO], None]) -> None:
        with open(self.temp, "w", encoding="utf-8") as f:
            fill(f)
        os.replace(self.temp, self.path)

    def discard(self) -> None:
        """Remove the temporary file unless it became the target."""
        try:
            os.unlink(self.temp)
        except FileNotFoundError:
            pass


def _whatif_parser(sub: argparse._SubParsersAction) -> None:
    """`kubesched whatif capacity|compare` (docs/whatif.md)."""
    w = sub.add_parser("whatif", help="capacity and configuration questions, answered by repeated simulation")
    questions = w.add_subparsers(dest="question", required=True)
    c = questions.add_parser("capacity", help="the fewest nodes of a template's shape that schedule every pending pod")
    c.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories")
    _overlay_arg(c)
    c.add_argument("--node-template", required=True, metavar="NODE.yaml", help="a file holding one Node")
    c.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
    c.add_argument("--max-nodes", type=int, default=1000, help="the most nodes to add (default 1000)")
    c.add_argument("--seed", type=int, default=0, help="the tie-break seed of every simulation (default 0)")
    c.add_argument("--output", choices=("json", "table"), default=None, help="default: table on a terminal, else json")
    c.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(c)
    m = questions.add_parser("compare", help="the same manifests under two scheduler configurations")
    m.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories")
    _overlay_arg(m)
    m.add_argument(
        "--config",
        action="append",
        required=True,
        dest="configs",
        help="a KubeSchedulerConfiguration, or default for upstream's; give it twice (A, then B)",
    )
    m.add_argument("--seed", type=int, default=0, help="the tie-break seed of both simulations (default 0)")
    m.add_argument("--output", choices=("json", "table"), default=None, help="default: table on a terminal, else json")
    m.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(m)


def _sweep_parser(sub: argparse._SubParsersAction) -> None:
    """`kubesched sweep SPEC.yaml` (docs/whatif.md)."""
    s = sub.add_parser("sweep", help="simulations over a grid or a random sample of variations, in parallel")
    s.add_argument("spec", metavar="SPEC.yaml", help="what to vary (docs/whatif.md)")
    s.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU); Ray: CPUs of local")
    s.add_argument(
        "--config",
        action="append",
        default=[],
        dest="configs",
        metavar="FILE",
        help="a configuration the spec names that may use plugins by import path or extenders (repeatable)",
    )
    s.add_argument("--ray", default=None, metavar="ADDRESS", help="run on Ray: auto, ray://HOST:PORT, or local")
    s.add_argument(
        "--output", choices=("json", "table", "csv"), default=None, help="default: table on a terminal, else json"
    )
    s.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(s)


def whatif_command(args: argparse.Namespace) -> int:
    from kubesched.simulator import whatif, whatif_output
    from kubesched.simulator.inputs import WhatIfError

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    try:
        if args.question == "capacity":
            answer = whatif.capacity(
                args.files,
                args.node_template,
                config=args.config,
                max_nodes=args.max_nodes,
                seed=args.seed,
                budget=_budget(args),
                overlays=args.overlay,
            )
        else:
            comparison = whatif.compare(
                args.files, args.configs, seed=args.seed, budget=_budget(args), overlays=args.overlay
            )
    except WhatIfError as err:
        _say(f"{err}")
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


def sweep_command(args: argparse.Namespace) -> int:
    from kubesched.simulator import sweep, whatif_output
    from kubesched.simulator.inputs import WhatIfError

    output = args.output or ("table" if sys.stdout.isatty() else "json")
    try:
        result = sweep.sweep(
            args.spec, workers=args.workers, ray_address=args.ray, configs=args.configs, budget=_budget(args)
        )
    except WhatIfError as err:
        _say(f"{err}")
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
    _say(f"sweep: {summary}" + (f"; {failed} failed" if failed else ""))
    return 0


def ui_command(args: argparse.Namespace) -> int:
    """Starlette and uvicorn are imported here only: `kubesched run` starts without them."""
    try:
        from kubesched.ui.server import run
    except ImportError as err:
        _say(f"ui needs {err.name or 'its web packages'}: pip install 'kubesched[ui]'")
        return EXIT_BAD_INPUT
    return run(
        args.files,
        config=args.config,
        overlays=args.overlay,
        host=args.host,
        port=args.port,
        open_browser=not args.no_open,
        seed=args.seed,
        until=args.until,
        bind_latency=args.bind_latency,
        allowed_host=args.allowed_host,
        token=args.token,
        require_token=args.require_token,
        budget=_budget(args),
    )


class _TextFormatter(logging.Formatter):
    """Log lines without Python tracebacks (only the exception's message), unless -v=4 or more asks for them."""

    def __init__(self, fmt: str, tracebacks: bool = False) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def formatException(self, ei: Any) -> str:
        if self.tracebacks:
            return super().formatException(ei)
        return f"  error: {ei[1]}" if ei and ei[1] is not None else ""

    def format(self, record: logging.LogRecord) -> str:
        if klog.verbosity_of(record.levelno) is not None:
            record.levelname = "INFO"  # V(n) lines are klog's Info lines
        return super().format(record)


class _JSONFormatter(logging.Formatter):
    """--logging-format=json: one object a line, with klog's field names."""

    def __init__(self, tracebacks: bool = False) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        v = klog.verbosity_of(record.levelno)
        level = "INFO" if v is not None else record.levelname
        doc: dict[str, object] = {"ts": record.created, "level": level, "logger": record.name}
        if v is not None:
            doc["v"] = v
        if isinstance(record.msg, klog.Message) and not record.args:
            doc["msg"] = record.msg.text
            doc.update({k: x if isinstance(x, int | float | bool) else str(x) for k, x in record.msg.values.items()})
        else:
            doc["msg"] = record.getMessage()
        if record.exc_info:
            error = record.exc_info[1]
            doc["err"] = self.formatException(record.exc_info) if self.tracebacks else str(error)
        return json.dumps(doc)


def _log_level(verbosity: int, command: str) -> int:
    """-v=N shows klog's V(N) lines and below; simulate keeps quiet (warnings only) without -v."""
    if command == "simulate" and verbosity <= 0:
        return logging.WARNING
    return klog.level_for(verbosity)


TRACEBACK_VERBOSITY = 4


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    tracebacks = args.verbosity >= TRACEBACK_VERBOSITY
    handler = logging.StreamHandler(sys.stderr)
    if getattr(args, "logging_format", "text") == "json":
        handler.setFormatter(_JSONFormatter(tracebacks))
    else:
        handler.setFormatter(_TextFormatter("%(levelname)s %(name)s: %(message)s", tracebacks))
    logging.basicConfig(level=_log_level(args.verbosity, args.command), handlers=[handler])
    commands = {
        "simulate": simulate_command,
        "run": run_command,
        "snapshot": snapshot_command,
        "whatif": whatif_command,
        "sweep": sweep_command,
        "ui": ui_command,
    }
    try:
        return commands[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except (Exception, RecursionError, MemoryError) as err:  # a bug: say so in one line, not a traceback
        if tracebacks:
            logging.getLogger("kubesched").exception("internal error")
        hint = "" if tracebacks else f" (run with -v={TRACEBACK_VERBOSITY} for the traceback)"
        _say(f"internal error: {type(err).__name__}: {err}{hint}")
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
