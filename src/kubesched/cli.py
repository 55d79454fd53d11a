"""Command line: `kubesched simulate FILE... [--config C] [--output json|table] [--seed N] [--record full|none]`."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

from kubesched import klog
from kubesched.api.duration import parse_duration
from kubesched.apiserver.documents import LoadError, read_object_file
from kubesched.config.load import ConfigError, load_config
from kubesched.config.trust import TRUSTED
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.startup import without_gc
from kubesched.userio import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR, AtomicFile, say, silence_stdout

# The simulation (simulator/commands.py), its report (rich) and legacy policies are imported where a command
# uses them: `kubesched run` restarts faster without them.
if TYPE_CHECKING:
    from kubesched.simulator.budget import Budget

KUBERNETES_VERSION = "v1.36"  # the kube-scheduler release kubesched follows


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
    _release_args(s)
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
    _shadow_parsers(sub)
    return p


def _shadow_parsers(sub: argparse._SubParsersAction) -> None:
    """`kubesched shadow` and `kubesched record` (docs/shadow.md): their own module, imported when used."""
    from kubesched.shadow.command import add_parsers

    add_parsers(sub)


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
    _release_args(u)
    _budget_args(u)


def _run_parser(sub: argparse._SubParsersAction) -> None:
    """kube-scheduler's own flags where they exist; --kubeconfig/--kube-api-* override clientConnection."""
    r = sub.add_parser("run", help="schedule the pods of a real cluster (kubeconfig or in-cluster credentials)")
    r.add_argument("--config", help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)")
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
    _release_args(r)
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


def _release_args(p: argparse.ArgumentParser, *, sides: bool = False) -> None:
    """--kubernetes-version (and --feature-gates): the kube-scheduler release to follow (docs/versions.md)."""
    p.add_argument(
        "--kubernetes-version",
        action="append" if sides else "store",
        default=[] if sides else None,
        metavar="MINOR",
        help="give it twice, A then B, to compare releases (docs/versions.md)"
        if sides
        else "the kube-scheduler release to follow: 1.34, 1.35 or 1.36 (default: the version a snapshot recorded, "
        "else 1.36; docs/versions.md)",
    )
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="GATES",
        help="A=true,B=false on top of the release's defaults, refused as its kube-scheduler refuses them "
        "(v1.36 workload-aware scheduling: GenericWorkload=true,GangScheduling=true; docs/workload-aware.md) "
        "(with --policy-config-file/--algorithm-provider: DefaultPodTopologySpread=true|false)",
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


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def simulate_command(args: argparse.Namespace) -> int:
    from kubesched.simulator.commands import simulate_command

    return simulate_command(args, _budget(args))


def whatif_command(args: argparse.Namespace) -> int:
    from kubesched.simulator.commands import whatif_command

    return whatif_command(args, _budget(args))


def sweep_command(args: argparse.Namespace) -> int:
    from kubesched.simulator.commands import sweep_command

    return sweep_command(args, _budget(args))


def _framework_message(err: FrameworkError, source: str) -> str:
    """A profile that cannot be built: the configuration file, the field, then upstream's text."""
    return err.located(source)


def run_command(args: argparse.Namespace) -> int:
    from kubesched.app import RunOptions, SchedulerApp
    from kubesched.backend.kube.api import ClientConfigError
    from kubesched.delegation import DelegationError
    from kubesched.release_flags import followed_release

    try:
        config = load_config(
            read_object_file(args.config) if args.config else None,
            source=args.config or "",
            trust=TRUSTED,
            release=followed_release(args.kubernetes_version, args.feature_gates),
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
        say(f"{err}")
        return EXIT_BAD_INPUT
    except FrameworkError as err:
        say(f"{_framework_message(err, args.config or '')}")
        return EXIT_BAD_INPUT
    except (ClientConfigError, DelegationError) as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    except Exception as err:  # no credentials, unreadable kubeconfig
        say(f"cannot reach the cluster: {err}")
        return EXIT_BAD_INPUT
    app.install_signal_handlers()
    return app.run()


def _shadow_command(args: argparse.Namespace) -> int:
    from kubesched.shadow.command import shadow_command

    return shadow_command(args)


def _record_command(args: argparse.Namespace) -> int:
    from kubesched.shadow.command import record_command

    return record_command(args)


def snapshot_command(args: argparse.Namespace) -> int:
    from kubesched.backend.kube.api import APIError, CredentialsError, KubeAPI, describe, load_configuration
    from kubesched.backend.kube.snapshot import cluster_version, take_snapshot, write_manifests

    try:
        target = None if args.output == "-" else AtomicFile(args.output)
    except OSError as err:
        say(f"snapshot: cannot write {args.output}: {err.strerror or err}")
        return EXIT_BAD_INPUT
    try:
        try:
            api = KubeAPI(load_configuration(args.kubeconfig, args.master, kubectl_defaults=True), qps=0)
        except CredentialsError as err:
            say(f"snapshot: {err}")
            return EXIT_BAD_INPUT
        except Exception as err:  # an unreadable kubeconfig
            say(f"cannot reach the cluster: {err}")
            return EXIT_BAD_INPUT
        try:
            objects = take_snapshot(api)
            version = cluster_version(api)
        except APIError as err:  # no answer, an untrusted server, refused credentials or rights
            say(f"snapshot: {describe(err, api.host)}")
            return 1
        try:
            if target is None:
                write_manifests(objects, sys.stdout, version)
                sys.stdout.flush()
            else:
                target.write(lambda f: write_manifests(objects, f, version))
        except BrokenPipeError:
            silence_stdout()
            return 0
        except OSError as err:
            say(f"snapshot: cannot write {args.output}: {err.strerror or err}")
            return 1
    finally:
        if target is not None:
            target.discard()
    counts: dict[str, int] = {}
    for obj in objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    print("kubesched: snapshot: " + ", ".join(f"{n} {k}" for k, n in counts.items()), file=sys.stderr)
    return 0


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
    _release_args(c)
    _budget_args(c)
    m = questions.add_parser(
        "compare", help="the same manifests under two scheduler configurations, or two kube-scheduler releases"
    )
    m.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories")
    _overlay_arg(m)
    m.add_argument(
        "--config",
        action="append",
        default=[],
        dest="configs",
        help="a KubeSchedulerConfiguration, or default for upstream's; give it twice (A, then B), "
        "or once for both sides of a release compare",
    )
    m.add_argument("--seed", type=int, default=0, help="the tie-break seed of both simulations (default 0)")
    _release_args(m, sides=True)
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
    _release_args(s)
    s.add_argument(
        "--output", choices=("json", "table", "csv"), default=None, help="default: table on a terminal, else json"
    )
    s.add_argument("-v", "--v", type=_verbosity, default=0, dest="verbosity", help="log verbosity")
    _budget_args(s)


def ui_command(args: argparse.Namespace) -> int:
    """Starlette and uvicorn are imported here only: `kubesched run` starts without them."""
    try:
        from kubesched.ui.server import run
    except ImportError as err:
        say(f"ui needs {err.name or 'its web packages'}: pip install 'kubesched[ui]'")
        return EXIT_BAD_INPUT
    from kubesched.release_flags import followed_release

    try:
        followed = followed_release(args.kubernetes_version, args.feature_gates)
    except LoadError as err:
        say(f"{err}")
        return EXIT_BAD_INPUT
    return run(
        args.files,
        kubernetes_version=followed.minor,
        feature_gates=args.feature_gates,
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
        handler.setFormatter(klog.JSONFormatter(tracebacks))
    else:
        handler.setFormatter(klog.TextFormatter("%(levelname)s %(name)s: %(message)s", tracebacks))
    logging.basicConfig(level=_log_level(args.verbosity, args.command), handlers=[handler])
    commands = {
        "simulate": simulate_command,
        "run": run_command,
        "snapshot": snapshot_command,
        "whatif": whatif_command,
        "sweep": sweep_command,
        "ui": ui_command,
        "shadow": _shadow_command,
        "record": _record_command,
    }
    try:
        return commands[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        silence_stdout()
        return 0
    except (Exception, RecursionError, MemoryError) as err:  # a bug: say so in one line, not a traceback
        if tracebacks:
            logging.getLogger("kubesched").exception("internal error")
        hint = "" if tracebacks else f" (run with -v={TRACEBACK_VERBOSITY} for the traceback)"
        say(f"internal error: {type(err).__name__}: {err}{hint}")
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
