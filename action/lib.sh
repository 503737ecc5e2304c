# shellcheck shell=bash disable=SC2034 # the variables here are read by the scripts that source it
# The release archive layout, named once: sourced by action/package.sh (which builds archives, in
# the release workflow and in CI), action/install.sh (which downloads them in the composite
# action) and checked against Cargo.toml's [package.metadata.binstall] by tests/it/action_install.rs.
#
#   driftgate-v<VERSION>-<TARGET>.tar.gz
#     driftgate-v<VERSION>-<TARGET>/driftgate[.exe]
#     driftgate-v<VERSION>-<TARGET>/README.md, MODEL-LICENSE (the embedded model's licence)
#   SHA256SUMS   one "<sha256>  <archive name>" line per archive (sha256sum's format)

# The checksum file of a release.
dg_sums=SHA256SUMS

# The release targets, one per runner platform GitHub hosts.
dg_targets="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc"

# dg_target RUNNER_OS RUNNER_ARCH -> the Rust target triple of the release built for it.
dg_target() {
  case "$1/$2" in
  Linux/X64) echo x86_64-unknown-linux-gnu ;;
  Linux/ARM64) echo aarch64-unknown-linux-gnu ;;
  macOS/X64) echo x86_64-apple-darwin ;;
  macOS/ARM64) echo aarch64-apple-darwin ;;
  Windows/X64) echo x86_64-pc-windows-msvc ;;
  *) return 1 ;;
  esac
}

# dg_stem VERSION TARGET -> the archive's name without extension, and its top directory.
dg_stem() { echo "driftgate-v$1-$2"; }

# dg_archive VERSION TARGET -> the archive's file name.
dg_archive() { echo "$(dg_stem "$1" "$2").tar.gz"; }

# dg_exe TARGET -> the binary's file name inside the archive.
dg_exe() {
  case "$1" in
  *-windows-*) echo driftgate.exe ;;
  *) echo driftgate ;;
  esac
}

# dg_version CARGO_TOML -> the package version (the first `version = "…"` line, [package]'s).
dg_version() {
  sed -n 's/^version = "\([^"]*\)"$/\1/p' "$1" | head -n 1
}

# dg_sha256 FILE -> its sha256 in hex (sha256sum on Linux and Git Bash, shasum on macOS).
dg_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum -- "$1" | cut -d' ' -f1
  else
    shasum -a 256 -- "$1" | cut -d' ' -f1
  fi
}

# dg_command_data TEXT -> TEXT as a workflow command's data: %, CR and LF escaped the way the
# runner unescapes them, so a line break in TEXT cannot start a second command.
dg_command_data() {
  local s=${1//%/%25}
  s=${s//$'\r'/%0D}
  echo "${s//$'\n'/%0A}"
}
