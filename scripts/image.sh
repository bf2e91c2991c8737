#!/usr/bin/env bash
# Builds kubewhy's OCI image with buildah, from scratch: no base image is pulled. The image
# holds the kubewhy binary of the release archive (and `kubectl-why`, a link to it), the
# shared libraries it links (glibc and libgcc_s of the building machine, found with ldd),
# /etc/passwd and /etc/group naming the non-root user 65532, and an empty /tmp. It runs as
# 65532:65532 and writes nothing, so it runs with a read-only root filesystem.
#
# Usage: scripts/image.sh [--archive FILE] [--tag NAME] [--oci-archive FILE]
#   --archive      the release archive (default: dist/kubewhy-VERSION-TARGET.tar.gz)
#   --tag          the image name (default: localhost/kubewhy:VERSION)
#   --oci-archive  also write the image as an OCI archive (podman load / skopeo copy)
# buildah runs as root here with the vfs storage driver (STORAGE_DRIVER overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
target=$(rustc -vV 2> /dev/null | sed -n 's/^host: //p' || true)
archive=dist/kubewhy-$version-${target:-x86_64-unknown-linux-gnu}.tar.gz
tag=localhost/kubewhy:$version
oci=
while [ $# -gt 0 ]; do
  case "$1" in
    --archive) archive="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --oci-archive) oci="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}

work=$(mktemp -d)
ctr=
cleanup() {
  [ -n "$ctr" ] && buildah rm "$ctr" > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

tar -xzf "$archive" -C "$work"
bin=$(echo "$work"/kubewhy-*/kubewhy)
[ -x "$bin" ] || { echo "image.sh: no kubewhy in $archive" >&2; exit 1; }
root=$work/rootfs
mkdir -p "$root/usr/local/bin" "$root/etc" "$root/tmp"
install -m 0755 "$bin" "$root/usr/local/bin/kubewhy"
ln -s kubewhy "$root/usr/local/bin/kubectl-why"
# What the binary needs at run time: its ELF interpreter and the libraries ldd resolves.
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
for lib in $interp $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
  cp --parents -L "$lib" "$root"
done
printf 'root:x:0:0:root:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:kubewhy:/nonexistent:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
chmod 1777 "$root/tmp"

epoch=$(git log -1 --format=%ct 2> /dev/null || echo 0)
ctr=$(buildah from scratch)
buildah copy --quiet "$ctr" "$root/" / > /dev/null
buildah config \
  --user 65532:65532 \
  --entrypoint '["/usr/local/bin/kubewhy"]' \
  --cmd '["serve", "--listen", "0.0.0.0:8787"]' \
  --port 8787/tcp \
  --workingdir / \
  --env HOME=/nonexistent \
  --os linux \
  --label org.opencontainers.image.title=kubewhy \
  --label "org.opencontainers.image.description=kubewhy: why is my Kubernetes cluster doing this?" \
  --label "org.opencontainers.image.version=$version" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  "$ctr"
buildah commit --quiet --format oci --timestamp "$epoch" "$ctr" "$tag" > /dev/null
if [ -n "$oci" ]; then
  mkdir -p "$(dirname "$oci")"
  rm -f "$oci"
  buildah push --quiet "$tag" "oci-archive:$oci:$tag"
fi
size=$(buildah images --format '{{.Size}}' "$tag" | head -n 1)
echo "image.sh: $tag ($size)${oci:+, $oci ($(stat -c %s "$oci") bytes)}"
