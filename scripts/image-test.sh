#!/usr/bin/env bash
# Runs kubewhy's image (scripts/image.sh) and checks it:
#   1. its config: user 65532:65532, entrypoint kubewhy, port 8787, one layer (from scratch);
#   2. `buildah run` (chroot isolation) as that user: `kubewhy why` and `kubectl-why` answer;
#   3. `kubewhy serve` started with `buildah run`, with a bearer token: `/` answers 200, `/mcp`
#      answers an MCP initialize (401 without the token); the process runs as uid 65532;
#      prints the time from start to the first MCP answer;
#   4. the image's root filesystem mounted read-only, entered with chroot as uid 65532 (what
#      a read-only-root pod does): `why` and `serve` work there too.
# `podman run` would be the natural way, but in this sandbox the OCI runtimes (crun, runc) may
# not set rlimits ("setrlimit RLIMIT_NPROC: operation not permitted"); steps 2-4 run the same
# image without an OCI runtime.
#
# Usage: scripts/image-test.sh [IMAGE]   (default: localhost/kubewhy:VERSION); run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
image=${1:-localhost/kubewhy:$version}
export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}
symptom="0/3 nodes are available: 3 Insufficient cpu."
token=image-test-$$-$RANDOM
fail() { echo "image-test: FAIL: $*" >&2; exit 1; }
passed=0
ok() { echo "image-test: ok: $*"; passed=$((passed + 1)); }

ctr=
server=
mnt=
# Stops the last server started: the serving process itself (found by `check_server`), which
# `buildah run` and the `ro` function run below the process `$!` names, then that process.
stop_server() {
  if [ -s /tmp/kubewhy-image-serve.pid ]; then kill "$(cat /tmp/kubewhy-image-serve.pid)" 2> /dev/null || true; rm -f /tmp/kubewhy-image-serve.pid; fi
  if [ -n "$server" ]; then kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; fi
  server=
}
cleanup() {
  stop_server
  if [ -n "$ctr" ]; then buildah umount "$ctr" > /dev/null 2>&1 || true; buildah rm "$ctr" > /dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# 1. the image's config
buildah inspect --type image "$image" > /tmp/kubewhy-image-inspect.json
python3 - "$image" << 'EOF' || fail "image config"
import json, sys
v = json.load(open("/tmp/kubewhy-image-inspect.json"))
c = v["OCIv1"]["config"]
assert c["User"] == "65532:65532", c["User"]
assert c["Entrypoint"] == ["/usr/local/bin/kubewhy"], c["Entrypoint"]
assert "8787/tcp" in c.get("ExposedPorts", {}), c.get("ExposedPorts")
layers = v["OCIv1"]["rootfs"]["diff_ids"]
assert len(layers) == 1, f"one layer from scratch, got {len(layers)}"
print(f"image-test: {sys.argv[1]}: user {c['User']}, entrypoint {c['Entrypoint']}, cmd {c.get('Cmd')}, {len(layers)} layer")
EOF
ok "config: non-root user, kubewhy entrypoint, one layer"

ctr=$(buildah from "$image")
run() { buildah run --isolation chroot --user 65532:65532 "$@"; }

# 2. why and kubectl-why inside the container
out=$(run "$ctr" -- /usr/local/bin/kubewhy why --output json "$symptom")
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["candidates"][0]["id"]=="failure-mode/insufficient-resources", d["candidates"][0]["id"]' || fail "why in the container"
ok "kubewhy why in the container"
out=$(run "$ctr" -- /usr/local/bin/kubectl-why "$symptom" -o json)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["candidates"][0]["id"]=="failure-mode/insufficient-resources"' || fail "kubectl-why in the container"
ok "kubectl-why in the container"

# 3. serve inside the container (buildah run shares the host network with chroot isolation)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
buildah run --isolation chroot --user 65532:65532 --env "KUBEWHY_AUTH_TOKEN=$token" "$ctr" -- \
  /usr/local/bin/kubewhy serve --listen "127.0.0.1:$port" > /tmp/kubewhy-image-serve.log 2>&1 &
server=$!
check_server() { # PORT START: waits for the first MCP answer, checks /, /mcp, 401, the uid
  python3 - "$1" "$token" "$2" << 'EOF'
import json, os, sys, time, urllib.request, urllib.error
port, token, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
base = f"http://127.0.0.1:{port}"
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "image-test", "version": "1"}}}).encode()
def mcp(auth):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if auth:
        h["Authorization"] = f"Bearer {token}"
    return urllib.request.urlopen(urllib.request.Request(base + "/mcp", data=init, headers=h), timeout=10)
deadline = time.time() + 120
while True:
    try:
        r = mcp(True)
        body = r.read().decode()
        break
    except (urllib.error.URLError, ConnectionError) as e:
        if isinstance(e, urllib.error.HTTPError) or time.time() > deadline:
            raise
        time.sleep(0.05)
first = time.time() - start
assert r.status == 200 and "serverInfo" in body, body[:300]
print(f"image-test: start to first MCP answer: {first:.2f} s")
try:
    mcp(False)
    raise SystemExit("no 401 without the token")
except urllib.error.HTTPError as e:
    assert e.code == 401, e.code
home = urllib.request.urlopen(urllib.request.Request(base + "/", headers={"Authorization": f"Bearer {token}"}), timeout=10)
assert home.status == 200 and "kubewhy" in home.read().decode().lower()
# The serving process and its uid.
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        continue
    if cmd[:2] == [b"/usr/local/bin/kubewhy", b"serve"] and f"127.0.0.1:{port}".encode() in cmd:
        uid = [l.split()[1:] for l in status.splitlines() if l.startswith("Uid:")][0]
        assert set(uid) == {"65532"}, uid
        print(f"image-test: serve runs as uid {uid[0]} (pid {pid})")
        open("/tmp/kubewhy-image-serve.pid", "w").write(pid)
        break
else:
    raise SystemExit("serving process not found")
EOF
}
check_server "$port" "$start" || { cat /tmp/kubewhy-image-serve.log; fail "serve in the container"; }
ok "serve in the container: / and /mcp (bearer token), uid 65532"
stop_server

# 4. read-only root filesystem, uid 65532, no OCI runtime: a private read-only bind mount of
# the image's root filesystem, entered with chroot.
mnt=$(buildah mount "$ctr")
ro() { unshare --mount --propagation private sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec chroot --userspec=65532:65532 "$0" "$@"' "$mnt" "$@"; }
ro /usr/local/bin/kubewhy why --output json "$symptom" | python3 -c 'import json,sys; assert json.load(sys.stdin)["candidates"][0]["id"]=="failure-mode/insufficient-resources"' || fail "why on a read-only root"
ok "why on a read-only root as uid 65532"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
KUBEWHY_AUTH_TOKEN=$token ro /usr/local/bin/kubewhy serve --listen "127.0.0.1:$port" > /tmp/kubewhy-image-serve-ro.log 2>&1 &
server=$!
check_server "$port" "$start" || { cat /tmp/kubewhy-image-serve-ro.log; fail "serve on a read-only root"; }
ok "serve on a read-only root as uid 65532"
stop_server

echo "image-test: $passed passed, 0 failed"
