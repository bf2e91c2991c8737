"""The release archive of scripts/release.sh (in $KUBEWHY_DIST, default dist/): its contents,
SHA256SUMS, the filled krew manifest, and the archive's binaries run the way users run them:
`kubectl-why` found on PATH and started with kubectl-style arguments, as kubectl starts a
plugin, and a krew-style install (the manifest's files copied, `kubectl-why` linked to `bin`)."""

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("KUBEWHY_DIST", ROOT / "dist"))
VERSION = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]
SYMPTOM = "0/3 nodes are available: 3 Insufficient cpu."


def archive() -> Path:
    found = sorted(DIST.glob(f"kubewhy-{VERSION}-*.tar.gz"))
    if not found:
        pytest.fail(f"no release archive in {DIST}: run scripts/release.sh first")
    return found[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    out = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(archive()) as t:
        t.extractall(out, filter="data")
    return out / archive().name.removesuffix(".tar.gz")


def test_sha256sums_matches_the_archive():
    lines = (DIST / "SHA256SUMS").read_text().splitlines()
    assert lines == [f"{sha256(archive())}  {archive().name}"]
    subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=DIST, check=True, capture_output=True)


def test_archive_contents_krew_can_extract():
    name = archive().name.removesuffix(".tar.gz")
    with tarfile.open(archive()) as t:
        members = t.getmembers()
    names = {m.name for m in members}
    for m in members:
        assert m.name == name or m.name.startswith(name + "/"), m.name
        # krew's extractor takes only directories and regular files.
        assert m.isdir() or m.isreg(), f"{m.name}: not a regular file"
        assert m.uid == 0 and m.gid == 0, m.name
        assert not m.mode & stat.S_IWOTH, m.name
    expected = {
        "kubewhy", "kubectl-why", "LICENSE", "README.md",
        "completions/kubewhy.bash", "completions/_kubewhy", "completions/kubewhy.fish", "completions/_kubewhy.ps1",
        "man/man1/kubewhy.1", "man/man1/kubewhy-why.1", "man/man1/kubewhy-scan.1", "man/man1/kubewhy-serve.1",
        "man/man1/kubectl-why.1",
    }
    for f in expected:
        assert f"{name}/{f}" in names, f
    by_name = {m.name: m for m in members}
    for b in ("kubewhy", "kubectl-why"):
        assert by_name[f"{name}/{b}"].mode & 0o111, f"{b} is executable"


def test_filled_krew_manifest():
    template = yaml.safe_load((ROOT / "plugins/why.yaml").read_text())
    text = (DIST / "why.yaml").read_text()
    assert "@SHA256:" not in text, "every placeholder is filled"
    filled = yaml.safe_load(text)
    name = archive().name
    platform = next(p for p in filled["spec"]["platforms"] if p["uri"].endswith("/" + name))
    assert re.fullmatch(r"[0-9a-f]{64}", platform["sha256"])
    assert platform["sha256"] == sha256(archive())
    # Only the sha256 placeholders differ from the template.
    for p in template["spec"]["platforms"]:
        p["sha256"] = next(q["sha256"] for q in filled["spec"]["platforms"] if q["uri"] == p["uri"])
    assert filled == template
    assert filled["spec"]["version"] == f"v{VERSION}"


def run_as_kubectl(plugin_dir: Path, *args, stdin=None):
    """What `kubectl why ARGS` does: find kubectl-why on PATH, exec it with ARGS."""
    env = dict(os.environ, PATH=f"{plugin_dir}:{os.environ.get('PATH', '')}", NO_COLOR="1")
    env.pop("KUBECONFIG", None)
    exe = shutil.which("kubectl-why", path=env["PATH"])
    assert exe and Path(exe).parent == plugin_dir, exe
    return subprocess.run([exe, *args], input=stdin, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def check_plugin(plugin_dir: Path):
    r = run_as_kubectl(plugin_dir, SYMPTOM, "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["candidates"][0]["id"] == "failure-mode/insufficient-resources"
    describe = (ROOT / "tests/fixtures/describe-pod-oomkilled.txt").read_text()
    r = run_as_kubectl(plugin_dir, "-", "-o", "yaml", stdin=describe)
    assert r.returncode == 0, r.stderr
    assert yaml.safe_load(r.stdout)["signals"]["input_style"] == "describe"
    r = run_as_kubectl(plugin_dir, "pvc/data-search-0", "-n", "shop", "--snapshot", "tests/fixtures/cluster/wffc-deadlock", "-o", "json")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["candidates"][0]["evidence"] == "holds"
    r = run_as_kubectl(plugin_dir, "scan", "-A", "--snapshot", "tests/fixtures/cluster/pending-cpu")
    assert r.returncode == 1, r.stderr
    assert "failure-mode/insufficient-resources" in r.stdout
    r = run_as_kubectl(plugin_dir, "--help")
    assert r.returncode == 0 and "kubectl why scan -A" in r.stdout


def test_archive_kubectl_why_as_kubectl_runs_it(unpacked):
    check_plugin(unpacked)


def test_krew_style_install(unpacked, tmp_path):
    """krew copies the platform's `files` and links kubectl-why to `bin`."""
    filled = yaml.safe_load((DIST / "why.yaml").read_text())
    platform = next(p for p in filled["spec"]["platforms"] if p["uri"].endswith("/" + archive().name))
    store, bindir = tmp_path / "store", tmp_path / "bin"
    store.mkdir()
    bindir.mkdir()
    for f in platform["files"]:
        src = unpacked.parent / f["from"]
        shutil.copy2(src, store / f["to"] / src.name)
    (bindir / "kubectl-why").symlink_to(store / platform["bin"])
    check_plugin(bindir)


def test_completions_and_man_pages_of_the_archive(unpacked):
    bash = (unpacked / "completions/kubewhy.bash").read_text()
    assert "complete" in bash and "kubewhy" in bash
    if shutil.which("bash"):
        subprocess.run(["bash", "-n", str(unpacked / "completions/kubewhy.bash")], check=True)
    man = (unpacked / "man/man1/kubewhy-why.1").read_text()
    assert ".TH" in man and "kubewhy\\-why" in man
    pages = list((unpacked / "man/man1").glob("*.1"))
    assert len(pages) > 20
