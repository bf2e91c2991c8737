"""Load test of `kubewhy serve` with the official Python MCP SDK (issue 16), loopback only.

Starts `kubewhy serve` on 127.0.0.1 (or uses --url, which must be a loopback URL), opens
--sessions concurrent MCP sessions over streamable HTTP, makes --calls `diagnose` calls in each,
and prints the p50/p99 of the call round trip, the p50/p99 of session set-up, the error count,
the CPU time of this client and of the server per 1,000 calls, and the server's peak RSS (VmHWM;
the server's figures when this script started it). Bounded: at most 200 sessions, 100 calls per
session and --deadline seconds overall.

The Python SDK spends several milliseconds of CPU per call itself, on the same cores as the
server, so this client bounds the figures; `cargo bench -p kubewhy-mcp --bench load` is the same
load with the Rust SDK (rmcp), whose client costs about a tenth of that.

    python tests/mcp/load.py [--sessions 100] [--calls 10] [--bin target/debug/kubewhy]
"""

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from mcp import Client

ROOT = Path(__file__).resolve().parents[2]
SYMPTOMS = [
    "etcdserver: mvcc: database space exceeded",
    "0/3 nodes are available: 3 Insufficient cpu.",
    "Back-off restarting failed container",
    "Liveness probe failed: HTTP probe failed with statuscode: 404",
    "MountVolume.SetUp failed for volume \"data\" : secret \"db-creds\" not found",
]


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def cpu_seconds(pid):
    """User + system CPU time of a process from /proc/<pid>/stat, in seconds (None without /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def rss_peak_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


async def session(url, calls, setup, times, errors):
    t = time.perf_counter()
    try:
        async with Client(url, mode="legacy") as c:
            setup.append((time.perf_counter() - t) * 1000)
            for i in range(calls):
                t = time.perf_counter()
                r = await c.call_tool("diagnose", {"symptom": SYMPTOMS[i % len(SYMPTOMS)]})
                times.append((time.perf_counter() - t) * 1000)
                if r.is_error:
                    errors.append("tool error")
    except Exception as e:  # noqa: BLE001 - every failure counts as an error
        errors.append(repr(e)[:200])


async def run(url, sessions, calls, deadline):
    setup, times, errors = [], [], []
    t = time.perf_counter()
    tasks = [asyncio.create_task(session(url, calls, setup, times, errors)) for _ in range(sessions)]
    done, pending = await asyncio.wait(tasks, timeout=deadline)
    for p in pending:
        p.cancel()
        errors.append("deadline")
    return setup, times, errors, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--url", help="a running server's loopback /mcp URL (default: start one)")
    ap.add_argument("--bin", default=os.environ.get("KUBEWHY_BIN", str(ROOT / "target" / "debug" / "kubewhy")))
    a = ap.parse_args()
    sessions, calls = min(a.sessions, 200), min(a.calls, 100)
    proc = None
    url = a.url
    if url:
        host = urlparse(url).hostname
        if host not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("load.py targets loopback only")
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([a.bin, "serve", "--listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
    try:
        client0, server0 = time.process_time(), cpu_seconds(proc.pid) if proc else None
        setup, times, errors, wall = asyncio.run(run(url, sessions, calls, a.deadline))
        client1, server1 = time.process_time(), cpu_seconds(proc.pid) if proc else None
        print(f"{sessions} sessions x {calls} diagnose calls in {wall:.1f} s; errors: {len(errors)}")
        print(f"call   p50 {pct(times, 50):8.1f} ms   p99 {pct(times, 99):8.1f} ms   (n={len(times)})")
        print(f"set-up p50 {pct(setup, 50):8.1f} ms   p99 {pct(setup, 99):8.1f} ms   (n={len(setup)})")
        n = max(len(times), 1)
        server_cpu = f"{(server1 - server0) * 1e6 / n:.0f} ms" if server0 is not None and server1 is not None else "n/a"
        print(f"CPU per 1,000 calls (set-up included): client {(client1 - client0) * 1e6 / n:.0f} ms, server {server_cpu}")
        if proc is not None:
            print(f"server peak RSS {rss_peak_kib(proc.pid)} KiB")
        for e in sorted(set(errors))[:5]:
            print(f"  error: {e}")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
