"""Benchmark of kubewhy's MCP server with the official Python MCP SDK.

Prints tool-call latency p50/p99 (client-side round trip) over stdio and streamable HTTP, for the
2025-11-25 handshake and the stateless 2026-07-28 revision, and the size in tokens (chars / 4) of
typical `diagnose` answers (Markdown text and structured JSON, brief and full).

    python tests/mcp/bench.py [--calls 200] [--bin target/release/kubewhy]
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]

SYMPTOMS = [
    "etcdserver: mvcc: database space exceeded",
    "0/3 nodes are available: 3 Insufficient cpu.",
    "Back-off restarting failed container",
    "Liveness probe failed: HTTP probe failed with statuscode: 404",
    "Error from server (Forbidden): pods is forbidden: User \"dev\" cannot list resource \"pods\"",
    "MountVolume.SetUp failed for volume \"data\" : secret \"db-creds\" not found",
    "Failed to pull image \"nginx:lates\": rpc error: code = NotFound",
    "dial tcp: lookup my-svc.default.svc.cluster.local: no such host",
]


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def measure(client: Client, calls: int) -> list[float]:
    for s in SYMPTOMS:  # warm up
        await client.call_tool("diagnose", {"symptom": s})
    times = []
    for i in range(calls):
        t = time.perf_counter()
        r = await client.call_tool("diagnose", {"symptom": SYMPTOMS[i % len(SYMPTOMS)]})
        times.append((time.perf_counter() - t) * 1000)
        assert not r.is_error
    return times


def report(label: str, times: list[float]) -> None:
    print(f"{label:<28} p50 {pct(times, 50):7.2f} ms   p99 {pct(times, 99):7.2f} ms   mean {statistics.mean(times):7.2f} ms   (n={len(times)})")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--bin", default=os.environ.get("KUBEWHY_BIN", str(ROOT / "target" / "debug" / "kubewhy")))
    a = ap.parse_args()
    print(f"binary: {a.bin}; {a.calls} diagnose calls per row, client-side round trip")

    for mode in ["legacy", "auto"]:
        async with Client(StdioServerParameters(command=a.bin, args=["mcp"]), mode=mode) as c:
            report(f"stdio  {mode}", await measure(c, a.calls))

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([a.bin, "serve", "--listen", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        for mode in ["legacy", "auto"]:
            async with Client(url, mode=mode) as c:
                report(f"http   {mode}", await measure(c, a.calls))
        async with Client(StdioServerParameters(command=a.bin, args=["mcp"]), mode="legacy") as c:
            print("\ndiagnose answer size in tokens (chars / 4): text / structured JSON")
            sizes = {"brief": [], "full": []}
            for s in SYMPTOMS:
                row = []
                for detail in ["brief", "full"]:
                    r = await c.call_tool("diagnose", {"symptom": s, "detail": detail})
                    t = sum(len(x.text) for x in r.content if x.type == "text") / 4
                    j = len(json.dumps(r.structured_content, separators=(",", ":"))) / 4
                    sizes[detail].append(t)
                    row.append(f"{detail} {t:5.0f} / {j:5.0f}")
                print(f"  {s[:52]:<54} {'   '.join(row)}")
            for detail, v in sizes.items():
                print(f"  {detail:<5} text: median {statistics.median(v):.0f} tokens, max {max(v):.0f}")
    finally:
        p.terminate()
        p.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
