"""kubewhy's MCP server end to end with the official Python MCP SDK.

Drives `kubewhy mcp` (stdio) and `kubewhy serve` (streamable HTTP, on a free loopback port), with
both the 2025-11-25 initialize handshake (`mode="legacy"`) and the stateless 2026-07-28 revision.
The binary is target/debug/kubewhy unless KUBEWHY_BIN names another.
"""

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

import mcp
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference, ResourceTemplateReference

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("KUBEWHY_BIN", str(ROOT / "target" / "debug" / "kubewhy"))
ETCD = "etcdserver: mvcc: database space exceeded"
TOOLS = ["diagnose", "explain", "search", "query_graph", "feature_gate", "kep", "metric", "check_claims"]
# "legacy": the 2025-11-25 initialize handshake; "auto": server/discover, which negotiates the
# stateless 2026-07-28 revision with this server.
MODES = ["legacy", "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", "auto": "2026-07-28"}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(token: str | None = None):
    port = free_port()
    env = dict(os.environ)
    env.pop("KUBEWHY_AUTH_TOKEN", None)
    if token:
        env["KUBEWHY_AUTH_TOKEN"] = token
    p = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"kubewhy serve exited: {p.stderr.read().decode()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture(scope="module")
def http_url():
    with http_server() as url:
        yield url


def stdio_params() -> StdioServerParameters:
    return StdioServerParameters(command=BIN, args=["mcp"])


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


VALID = {
    "diagnose": {"symptom": ETCD},
    "explain": {"id_or_name": "kubelet"},
    "search": {"text": "crash loop", "kind": "failure-mode", "limit": 5},
    "query_graph": {"sparql": "SELECT ?fm WHERE { ?fm kw:inLoop ?l } LIMIT 3"},
    "feature_gate": {"name": "SidecarContainers", "version": "1.30"},
    "kep": {"query": "753"},
    "metric": {"name": "etcd_mvcc_db_total_size_in_bytes"},
    "check_claims": {"text": "The SidecarContainers feature gate went beta in 1.29."},
}

INVALID = {
    "diagnose": ({"symptom": "x", "top": 99}, "top"),
    "explain": ({"id_or_name": ""}, "id_or_name"),
    "search": ({"text": "etcd", "kind": "widget"}, "kind"),
    "query_graph": ({"sparql": "DELETE WHERE { ?s ?p ?o }"}, "read-only"),
    "feature_gate": ({"name": "NoSuchGateAtAll"}, "name"),
    "kep": ({}, "query"),
    "metric": ({"name": "no_such_metric_total"}, "name"),
    "check_claims": ({"txt": "x"}, "txt"),
}


async def exercise(client: Client, mode: str) -> None:
    """The whole surface, on one connected client."""
    assert client.protocol_version == EXPECTED_VERSION[mode]
    assert client.server_info.name == "kubewhy"
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == TOOLS
    for t in tools:
        assert t.output_schema is not None, t.name
        assert t.annotations.read_only_hint is True and t.annotations.idempotent_hint is True and t.annotations.open_world_hint is False

    d = await client.call_tool("diagnose", {"symptom": ETCD})
    assert not d.is_error, text_of(d)
    assert d.structured_content["candidates"][0]["id"] == "failure-mode/etcd-nospace-alarm"
    assert len(text_of(d)) < 6000

    for name in TOOLS:
        ok = await client.call_tool(name, VALID[name])
        assert not ok.is_error, (name, text_of(ok))
        assert isinstance(ok.structured_content, dict), name
        assert text_of(ok), name
        args, needle = INVALID[name]
        bad = await client.call_tool(name, args)
        assert bad.is_error, (name, text_of(bad))
        assert needle in text_of(bad), (name, text_of(bad))
    big = await client.call_tool("diagnose", {"symptom": "a" * (1024 * 1024 + 1)})
    assert big.is_error and "1 MiB" in text_of(big)

    resources = await client.list_resources()
    assert len(resources.resources) == 100 and resources.next_cursor
    page2 = await client.list_resources(cursor=resources.next_cursor)
    uris = [r.uri for r in resources.resources + page2.resources]
    assert uris == sorted(uris)
    templates = await client.list_resource_templates()
    assert templates.resource_templates[0].uri_template == "kubewhy://{kind}/{slug}"
    read = await client.read_resource("kubewhy://failure-mode/etcd-nospace-alarm")
    assert read.contents[0].text.startswith("# ")
    with pytest.raises(MCPError):
        await client.read_resource("kubewhy://component/no-such-component")

    prompts = await client.list_prompts()
    assert [p.name for p in prompts.prompts] == ["diagnose_symptom", "explain_component", "review_answer"]
    p = await client.get_prompt("diagnose_symptom", {"symptom": ETCD})
    assert "failure-mode/etcd-nospace-alarm" in p.messages[0].content.text
    c = await client.complete(PromptReference(name="explain_component"), {"name": "component", "value": "component/kube-s"})
    assert "component/kube-scheduler" in c.completion.values
    c = await client.complete(ResourceTemplateReference(uri="kubewhy://{kind}/{slug}"), {"name": "slug", "value": "Sidecar"}, {"kind": "feature-gate"})
    assert "SidecarContainers" in c.completion.values


@pytest.mark.parametrize("mode", MODES)
async def test_stdio(mode):
    async with Client(stdio_params(), mode=mode) as client:
        await exercise(client, mode)


@pytest.mark.parametrize("mode", MODES)
async def test_http(http_url, mode):
    async with Client(http_url, mode=mode) as client:
        await exercise(client, mode)


@pytest.mark.parametrize("mode", MODES)
async def test_http_twenty_concurrent_sessions(http_url, mode):
    async def one(i: int) -> str:
        async with Client(http_url, mode=mode) as client:
            r = await client.call_tool("diagnose", {"symptom": ETCD if i % 2 else "0/3 nodes are available: 3 Insufficient cpu."})
            assert not r.is_error, text_of(r)
            return r.structured_content["candidates"][0]["id"]

    ids = await asyncio.gather(*(one(i) for i in range(20)))
    assert ids.count("failure-mode/etcd-nospace-alarm") == 10
    assert ids.count("failure-mode/insufficient-resources") == 10


async def test_http_session_closes_cleanly(http_url, caplog):
    # The SDK sends DELETE when the client closes; it logs a warning unless the answer is 200 or 204.
    with caplog.at_level(logging.DEBUG, logger="mcp"):
        async with Client(http_url, mode="legacy") as client:
            r = await client.call_tool("diagnose", {"symptom": ETCD})
            assert not r.is_error, text_of(r)
    failed = [r.getMessage() for r in caplog.records if "termination failed" in r.getMessage()]
    assert not failed, failed


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_origin_is_checked(http_url):
    assert httpx.post(http_url, json=INIT, headers=ACCEPT).status_code == 200
    assert httpx.post(http_url, json=INIT, headers={**ACCEPT, "Origin": "http://localhost:5173"}).status_code == 200
    assert httpx.post(http_url, json=INIT, headers={**ACCEPT, "Origin": "https://evil.example.com"}).status_code == 403


def test_http_host_is_checked(http_url):
    assert httpx.post(http_url, json=INIT, headers={**ACCEPT, "Host": "evil.example.com"}).status_code == 403


async def test_http_bearer_token():
    with http_server(token="s3cret-token") as url:
        assert httpx.post(url, json=INIT, headers=ACCEPT).status_code == 401
        assert httpx.post(url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.post(url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer s3cret-token"}).status_code == 200
        import httpx2

        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http:
            transport = mcp.client.streamable_http.streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                r = await client.call_tool("diagnose", {"symptom": ETCD})
                assert r.structured_content["candidates"][0]["id"] == "failure-mode/etcd-nospace-alarm"


async def test_stdio_survives_garbage_and_logs_to_stderr():
    """Invalid JSON on stdin yields no crash; stdout carries only JSON-RPC."""
    p = await asyncio.create_subprocess_exec(BIN, "mcp", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "KUBEWHY_LOG": "debug"})
    init = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    p.stdin.write(b"this is not json\n")
    p.stdin.write(init)
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"diagnose","arguments":{"symptom":"CrashLoopBackOff"}}}\n')
    await p.stdin.drain()
    p.stdin.close()
    out, err = await asyncio.wait_for(p.communicate(), 60)
    lines = [line for line in out.decode().splitlines() if line.strip()]
    assert lines, err.decode()
    import json

    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert any('"id":2' in line for line in lines)
