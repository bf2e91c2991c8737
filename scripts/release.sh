#!/usr/bin/env bash
# Builds kubewhy's release archive:
#
#   dist/kubewhy-VERSION-TARGET.tar.gz   kubewhy-VERSION-TARGET/{kubewhy, kubectl-why,
#                                        completions/ (bash, zsh, fish, PowerShell),
#                                        man/man1/*.1, LICENSE, README.md}
#   dist/SHA256SUMS                      sha256sum of the archive (`sha256sum -c SHA256SUMS`)
#   dist/why.yaml                        the krew manifest (plugins/why.yaml) with this
#                                        archive's sha256 filled in
#
# Usage: scripts/release.sh [--profile PROFILE] [--out DIR] [--no-build]
#   --profile  the cargo profile to build (default: release); CI may pass a cheaper one
#   --out      where to write (default: dist)
#   --no-build package the binaries already in target/PROFILE
# The archive is reproducible: sorted names, owner 0, mtimes of the last commit, gzip -n.
# No upload: publishing the files is left to whoever makes the release.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
out=dist
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
target=$(rustc -vV | sed -n 's/^host: //p')
[ -n "$version" ] && [ -n "$target" ] || { echo "release.sh: cannot tell the version or target" >&2; exit 1; }
case "$profile" in dev) dir=target/debug ;; *) dir=target/$profile ;; esac

if [ "$build" = 1 ]; then
  echo "release.sh: cargo build --profile $profile (kubewhy $version, $target)"
  cargo build --profile "$profile" --locked -p kubewhy --bin kubewhy --bin kubectl-why
fi

name=kubewhy-$version-$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/$name
mkdir -p "$stage/completions" "$stage/man/man1" "$out"

for b in kubewhy kubectl-why; do
  install -m 0755 "$dir/$b" "$stage/$b"
  # Symbols are not needed to run (the release profile keeps no debug info either).
  if command -v strip > /dev/null; then strip "$stage/$b"; fi
done
bin=$stage/kubewhy
"$bin" completions bash > "$stage/completions/kubewhy.bash"
"$bin" completions zsh > "$stage/completions/_kubewhy"
"$bin" completions fish > "$stage/completions/kubewhy.fish"
"$bin" completions powershell > "$stage/completions/_kubewhy.ps1"
"$bin" manpages "$stage/man/man1" 2> /dev/null
install -m 0644 LICENSE README.md "$stage/"

epoch=$(git log -1 --format=%ct 2> /dev/null || echo 0)
archive=$out/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --mode='u+rw,go+r,go-w' \
  -C "$work" -cf - "$name" | gzip -n -9 > "$archive"
(cd "$out" && sha256sum "$name.tar.gz" > SHA256SUMS)
sha=$(cut -d' ' -f1 "$out/SHA256SUMS")

# The krew manifest: every `@SHA256:ARCHIVE@` placeholder whose archive is this one gets its
# sha256; a placeholder left over (another platform's archive) is an error, so a published
# manifest never carries one.
sed "s|@SHA256:$name.tar.gz@|$sha|g" plugins/why.yaml > "$out/why.yaml"
if grep -n '@SHA256:' "$out/why.yaml" >&2; then
  echo "release.sh: the placeholders above were not filled (archives of other platforms are built on those platforms)" >&2
  exit 1
fi
grep -q "v$version/$name.tar.gz" "$out/why.yaml" || { echo "release.sh: plugins/why.yaml does not point at $name.tar.gz of v$version" >&2; exit 1; }

echo "release.sh: $archive ($(stat -c %s "$archive") bytes), $out/SHA256SUMS, $out/why.yaml"
