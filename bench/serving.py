"""The secure port under idle connections and load, on loopback.

    python3 bench/serving.py [--idle 50] [--rate 200] [--seconds 5] [--src src]

The server runs in a child process (its own interpreter and GIL) with the real
scheduler metrics registry and kube-scheduler's default authorization (only
/healthz, /readyz, /livez open); --src picks the tree it imports, so the same
script times an older tree. The bench process then measures, each request on a
new TLS connection as a kubelet probe makes it:

1. /healthz latency alone (--probes requests, 30 by default, one after another);
2. /healthz latency with --idle TCP connections open that never start their TLS
   handshake (a request that gets no answer within 5 s counts as failed);
3. with those still open, --rate requests per second to /healthz for --seconds,
   sent on a fixed schedule by a pool of 64 threads: success rate, achieved rate,
   p50 and p99 latency (measured from the scheduled send time, so queueing in the
   client counts against the server too).

Everything is bounded: at most rate x seconds requests, 5 s timeout each.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import statistics
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SERVER = textwrap.dedent(
    """
    import sys, time
    from kubesched.metrics import SchedulerMetrics
    from kubesched.serving import Endpoints
    ep = Endpoints(registry=SchedulerMetrics().registry, configz={}, healthz={"ping": lambda: True}, readyz={})
    print(ep.serve("127.0.0.1", 0)[1], flush=True)
    sys.stdin.read()
    """
)
TIMEOUT = 5.0


def _context() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


CTX = _context()


def probe(port: int, path: str = "/healthz") -> float | None:
    """Seconds for one GET on a new connection, or None if it failed or took longer than TIMEOUT."""
    start = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw:
            with CTX.wrap_socket(raw) as tls:
                tls.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := tls.recv(65536):
                    data += chunk
    except OSError:
        return None
    return time.perf_counter() - start if data.split(b"\r\n", 1)[0].split(b" ")[1:2] == [b"200"] else None


def summary(latencies: list[float | None]) -> str:
    ok = sorted(x for x in latencies if x is not None)
    if not ok:
        return f"0/{len(latencies)} answered"
    p50 = statistics.median(ok) * 1000
    p99 = ok[min(len(ok) - 1, int(len(ok) * 0.99))] * 1000
    return f"{len(ok)}/{len(latencies)} answered, p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {ok[-1] * 1000:.1f} ms"


def under_load(port: int, rate: int, seconds: float) -> tuple[list[float | None], float]:
    n = int(rate * seconds)
    results: list[float | None] = [None] * n
    t0 = time.perf_counter() + 0.1

    def one(i: int) -> None:
        due = t0 + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        took = probe(port)
        results[i] = None if took is None else time.perf_counter() - due

    with ThreadPoolExecutor(max_workers=64) as pool:
        list(pool.map(one, range(n)))
    return results, n / (time.perf_counter() - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idle", type=int, default=50, help="idle connections that never handshake (default 50)")
    parser.add_argument("--rate", type=int, default=200, help="requests per second (default 200)")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long the load lasts (default 5)")
    parser.add_argument("--probes", type=int, default=30, help="requests in steps 1 and 2 (default 30)")
    parser.add_argument("--src", default=str(Path(__file__).resolve().parent.parent / "src"), help="tree served")
    args = parser.parse_args()
    if not (0 <= args.idle <= 1000 and 1 <= args.rate <= 1000 and 0 < args.seconds <= 30 and 1 <= args.probes <= 100):
        parser.error("--idle 0..1000, --rate 1..1000, --seconds up to 30, --probes 1..100")
    env = {**os.environ, "PYTHONPATH": args.src}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    )
    idle: list[socket.socket] = []
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"server: {args.src}, port {port}")
        print("/healthz alone:               ", summary([probe(port) for _ in range(args.probes)]))
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(args.idle)]
        time.sleep(0.2)
        print(f"/healthz, {args.idle} idle connections:", summary([probe(port) for _ in range(args.probes)]))
        results, achieved = under_load(port, args.rate, args.seconds)
        print(f"{args.rate}/s for {args.seconds:g} s ({achieved:.0f}/s sent):", summary(results))
    finally:
        for s in idle:
            s.close()
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
