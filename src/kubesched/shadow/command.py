"""The `kubesched shadow` and `kubesched record` subcommands: their flags, and bad input as one line, status 2."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Any

from kubesched.api.duration import parse_duration

EXIT_BAD_INPUT = 2


def _say(message: str) -> None:
    print("kubesched: " + " ".join(message.split()), file=sys.stderr)


def _duration(text: str) -> float:
    try:
        value = parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0s")
    return value


def _settle(text: str) -> float:
    try:
        value = parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0s or more")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kubeconfig",
        default="",
        help="path to a kubeconfig; default, as kubectl: $KUBECONFIG, ~/.kube/config, else in-cluster credentials",
    )
    p.add_argument("--master", default="", help="the API server's address (overrides the kubeconfig's)")
    p.add_argument("--duration", type=_duration, default=None, help="stop after this long (default: at SIGINT/SIGTERM)")
    p.add_argument("-v", "--v", type=int, default=0, dest="verbosity", help="log verbosity")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "shadow", help="decide every pod a real cluster's scheduler decides, read-only, and compare (docs/shadow.md)"
    )
    _common(s)
    s.add_argument("--config", help="a KubeSchedulerConfiguration to shadow with (default: upstream's defaults)")
    s.add_argument(
        "--output", choices=("jsonl", "table"), default="jsonl", help="one line per decision (default jsonl)"
    )
    s.add_argument(
        "--scheduler-name", default="", help="shadow the pods of this scheduler only (default: every profile's)"
    )
    s.add_argument("--report", metavar="FILE.html", help="write an HTML report of the shadowed period at the end")
    s.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve /metrics (observed and agreeing decisions) over HTTPS, with kube-scheduler's authentication",
    )
    s.add_argument(
        "--settle",
        type=_settle,
        default=0.25,
        help="how long a decision may wait for the binding of a pod the cluster's queue had before it (default 250ms)",
    )
    s.add_argument("--tls-cert-file", default="", help="the metrics port's certificate (default: self-signed)")
    s.add_argument("--tls-private-key-file", default="", help="its key")
    s.add_argument(
        "--authentication-kubeconfig",
        default="",
        help="kubeconfig for the metrics port's TokenReviews; default: in-cluster credentials, else none",
    )
    s.add_argument(
        "--authorization-kubeconfig",
        default="",
        help="kubeconfig for the metrics port's SubjectAccessReviews; default: in-cluster credentials, else none",
    )
    s.add_argument(
        "--authorization-always-allow-paths",
        type=lambda text: tuple(p for p in text.split(",") if p),
        default=("/healthz", "/readyz", "/livez"),
        metavar="PATHS",
        help="comma-separated paths served without authorization (default /healthz,/readyz,/livez)",
    )
    add_record_parser(sub)


def shadow_command(args: argparse.Namespace) -> int:
    from kubesched.apiserver.documents import LoadError, read_object_file
    from kubesched.backend.kube.api import ClientConfigError, CredentialsError
    from kubesched.config.load import ConfigError, load_config
    from kubesched.config.trust import TRUSTED
    from kubesched.framework.runtime.errors import FrameworkError
    from kubesched.shadow.app import Shadow, ShadowOptions

    if args.report is not None:
        why = _writable(args.report)
        if why:
            _say(f"shadow: cannot write {args.report}: {why}")
            return EXIT_BAD_INPUT
    try:
        config = load_config(
            read_object_file(args.config) if args.config else None, source=args.config or "", trust=TRUSTED
        )
        opts = ShadowOptions(
            kubeconfig=args.kubeconfig,
            master=args.master,
            scheduler_name=args.scheduler_name,
            output=args.output,
            duration=args.duration,
            settle=args.settle,
        )
        shadow = Shadow(config, opts)
    except (LoadError, ConfigError, ClientConfigError, CredentialsError) as err:
        _say(f"shadow: {err}")
        return EXIT_BAD_INPUT
    except FrameworkError as err:
        _say(f"shadow: {args.config or 'configuration'}: {err}")
        return EXIT_BAD_INPUT
    except Exception as err:  # an unreadable kubeconfig
        _say(f"shadow: cannot reach the cluster: {err}")
        return EXIT_BAD_INPUT
    endpoints = None
    if args.metrics_address is not None:
        served = _serve_metrics(shadow, args)
        if served is None:
            return EXIT_BAD_INPUT
        endpoints = served
    collector = None
    if args.report is not None:
        from kubesched.shadow.report import ReportCollector

        collector = ReportCollector()
        shadow.listeners.append(collector)
    shadow.install_signal_handlers()
    try:
        code = shadow.run()
    finally:
        if endpoints is not None:
            endpoints.stop()
    if collector is not None:
        from kubesched.shadow.report import render

        try:
            with open(args.report, "w", encoding="utf-8") as f:
                f.write(render(shadow.tally, collector, shadow.assumed, args.config or ""))
        except OSError as err:
            _say(f"shadow: cannot write {args.report}: {err.strerror or err}")
            return 1
    return code


def _serve_metrics(shadow: Any, args: argparse.Namespace) -> Any:
    """The secure port with the shadow's counters; None (having said why) when it cannot be served."""
    from kubesched.delegation import DelegationError, DelegationOptions
    from kubesched.serving import ServingError
    from kubesched.shadow.serve import AddressError, ServingOptions, ShadowMetrics, serve

    metrics = ShadowMetrics()
    shadow.listeners.append(metrics)
    opts = ServingOptions(
        address=args.metrics_address,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        delegation=DelegationOptions(
            authentication_kubeconfig=args.authentication_kubeconfig,
            authorization_kubeconfig=args.authorization_kubeconfig,
            always_allow_paths=args.authorization_always_allow_paths,
        ),
    )
    try:
        endpoints, host, port = serve(metrics, opts, shadow.store.synced)
    except (AddressError, DelegationError, ServingError) as err:
        _say(f"shadow: {err}")
        return None
    _say(f"shadow: serving metrics securely on {host}:{port}")
    return endpoints


def add_record_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser(
        "record", help="record a real cluster's state and churn, read-only, as a trace `simulate` replays"
    )
    _common(r)
    r.add_argument("-o", "--output", required=True, metavar="TRACE.yaml", help="the trace to write (at the end)")


def _writable(path: str) -> str:
    """'' when `path` can be written (its folder exists and is writable), else why not."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return "is a directory"
    if not os.path.isdir(folder):
        return "no such directory"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return "permission denied"
    return ""


def record_command(args: argparse.Namespace) -> int:
    from kubesched.backend.kube.api import ClientConfigError, CredentialsError
    from kubesched.shadow.record import Recorder

    why = _writable(args.output)
    if why:
        _say(f"record: cannot write {args.output}: {why}")
        return EXIT_BAD_INPUT
    try:
        recorder = Recorder(args.kubeconfig, args.master)
    except (ClientConfigError, CredentialsError) as err:
        _say(f"record: {err}")
        return EXIT_BAD_INPUT
    except Exception as err:  # an unreadable kubeconfig
        _say(f"record: cannot reach the cluster: {err}")
        return EXIT_BAD_INPUT

    def stop(signum: int, frame: Any) -> None:
        recorder.stop.set()
        recorder.wake.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def started(objects: int) -> None:
        _say(f"record: recording from {objects} objects")

    if not recorder.run(args.duration, on_start=started):
        _say(f"record: the informers did not sync with {recorder.api.host}; nothing written")
        return 1
    temp = f"{args.output}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as f:
            recorder.trace.write(f)
        os.replace(temp, args.output)
    except OSError as err:
        _say(f"record: cannot write {args.output}: {err.strerror or err}")
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return 1
    counts = recorder.trace.counts()
    _say(
        f"record: {args.output}: {counts['objects']} objects at the start, then {counts['create']} created, "
        f"{counts['update']} updated, {counts['delete']} deleted over {recorder.trace.seconds:.1f}s"
    )
    return 0
