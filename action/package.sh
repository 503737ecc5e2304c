#!/usr/bin/env bash
# Release archives, in the layout action/lib.sh names.
#
#   action/package.sh build TARGET OUTDIR     cargo build --release --locked --target TARGET, then
#                                             pack it (the release workflow and CI run exactly this)
#   action/package.sh pack TARGET OUTDIR BIN  pack an already built binary BIN for TARGET
#   action/package.sh sums OUTDIR             write OUTDIR/SHA256SUMS over every archive there
#
# Prints the path of what it wrote. The version is Cargo.toml's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=action/lib.sh
. "$root/action/lib.sh"

die() {
  echo "package.sh: $*" >&2
  exit 2
}

pack() {
  local target=$1 out=$2 bin=$3 version stem staging
  case " $dg_targets " in
  *" $target "*) ;;
  *) die "unknown release target '$target' (one of: $dg_targets)" ;;
  esac
  [ -f "$bin" ] || die "no binary at $bin"
  version=$(dg_version "$root/Cargo.toml")
  [ -n "$version" ] || die "no version in $root/Cargo.toml"
  stem=$(dg_stem "$version" "$target")
  mkdir -p "$out"
  staging=$(mktemp -d)
  mkdir "$staging/$stem"
  cp "$bin" "$staging/$stem/$(dg_exe "$target")"
  chmod 755 "$staging/$stem/$(dg_exe "$target")"
  cp "$root/README.md" "$staging/$stem/README.md"
  cp "$root/models/all-MiniLM-L6-v2/LICENSE" "$staging/$stem/MODEL-LICENSE"
  # GNU tar (Linux, Git Bash): fixed order, owner and times, so one binary packs to the same
  # bytes. bsdtar (macOS) has no such flags; its archive differs only in metadata.
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar -C "$staging" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$stem"
  else
    tar -C "$staging" -cf - "$stem"
  fi | gzip -n -9 >"$out/$(dg_archive "$version" "$target")"
  rm -rf "$staging"
  echo "$out/$(dg_archive "$version" "$target")"
}

case "${1:-}" in
build)
  [ $# -eq 3 ] || die "usage: package.sh build TARGET OUTDIR"
  (cd "$root" && cargo build --release --locked --target "$2" --bin driftgate)
  pack "$2" "$3" "$root/target/$2/release/$(dg_exe "$2")"
  ;;
pack)
  [ $# -eq 4 ] || die "usage: package.sh pack TARGET OUTDIR BIN"
  pack "$2" "$3" "$4"
  ;;
sums)
  [ $# -eq 2 ] || die "usage: package.sh sums OUTDIR"
  (
    cd "$2"
    for a in driftgate-v*.tar.gz; do
      [ -f "$a" ] || die "no archives in $2"
      echo "$(dg_sha256 "$a")  $a"
    done >"$dg_sums"
  )
  echo "$2/$dg_sums"
  ;;
*)
  die "usage: package.sh build TARGET OUTDIR | pack TARGET OUTDIR BIN | sums OUTDIR"
  ;;
esac
