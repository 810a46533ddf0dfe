#!/usr/bin/env bash
# Build ACC and install it in its one layout, or pack that layout as a relocatable archive.
#
#   scripts/install.sh [--prefix DIR]     build (release) and install into DIR (default ~/.local)
#   scripts/install.sh --archive DIR      build (release) and write DIR/acc-<version>-<target>.tar.gz
#                                         and its .sha256
#   scripts/install.sh --uninstall [--prefix DIR] [--with-clients | --force]
#                                         remove exactly the files an install into DIR put there;
#                                         refused while a client's hooks still run this acc
#                                         (the acc uninstall --client commands are named), unless
#                                         --with-clients runs them first or --force removes anyway
#   --debug                               use the dev profile instead of release (quicker to
#                                         build; what the install-layout test uses)
#
# The layout (every path relative to the prefix; ACC finds its pieces relative to the running
# executable, so the tree works wherever it is unpacked):
#   bin/acc, bin/acc-mcp, bin/acc-capture
#   lib/acc/adapters/libacc_adapter_{next_turn,claude_inbox,qwen_inbox,opencode_plugin,codex_app_server}.so
#   share/acc/contracts/<client>/...      the contracts and captures live delivery is admitted from
#   share/man/man1/acc.1, acc-<command>.1 the manual pages (`man acc`, `man acc-status`)
#   share/acc/install-manifest.txt        every file installed (what --uninstall removes)
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${HOME:?HOME is not set}/.local"
archive=""
uninstall=false
with_clients=false
force=false
profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --archive) archive="${2:?--archive needs a folder}"; shift 2 ;;
    --uninstall) uninstall=true; shift ;;
    --with-clients) with_clients=true; shift ;;
    --force) force=true; shift ;;
    --debug) profile=debug; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument \`$1\` (see --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

manifest_name="share/acc/install-manifest.txt"

if $uninstall; then
  manifest="$prefix/$manifest_name"
  if [ ! -f "$manifest" ]; then
    echo "install.sh: no ACC installation in $prefix (no $manifest_name)" >&2
    exit 1
  fi
  # Clients whose configuration still has ACC's entries (their hooks would then fail on every
  # event with "acc: not found"): asked of the installed acc itself, which plans an uninstall
  # without changing anything.
  # The list of clients is the installed acc's own (`acc clients`), never one written here: a
  # list in this script once forgot three clients, and uninstalling broke their hooks.
  acc="$prefix/bin/acc"
  hooked=()
  if [ -x "$acc" ]; then
    if ! clients="$("$acc" clients 2>/dev/null)" || [ -z "$clients" ]; then
      if ! $force; then
        echo "install.sh: $acc cannot say which clients it knows (\`acc clients\` failed), so whether their hooks still run it is unknown. Nothing was removed; run this again with --force to remove ACC anyway." >&2
        exit 1
      fi
      clients=""
    fi
    for client in $clients; do
      if "$acc" --json uninstall --client "$client" --dry-run 2>/dev/null | grep -q '"changes":true'; then
        hooked+=("$client")
      fi
    done
  fi
  if [ "${#hooked[@]}" -gt 0 ]; then
    if $with_clients; then
      for client in "${hooked[@]}"; do
        echo "install.sh: acc uninstall --client $client" >&2
        "$acc" uninstall --client "$client" >&2
      done
    elif ! $force; then
      echo "install.sh: the hooks of ${hooked[*]} still run $acc; removing it would make every one of their hooks fail. Run first:" >&2
      for client in "${hooked[@]}"; do
        echo "  $acc uninstall --client $client" >&2
      done
      echo "or run this again with --with-clients (runs them) or --force (removes ACC anyway). Nothing was removed." >&2
      exit 1
    fi
  fi
  # Every listed file, then the manifest, then the folders ACC alone owns if they are empty.
  while IFS= read -r file; do
    case "$file" in ''|/*|*..*) continue ;; esac
    rm -f -- "$prefix/$file"
  done < "$manifest"
  rm -f -- "$manifest"
  find "$prefix/share/acc/contracts" "$prefix/lib/acc" -depth -type d -empty -delete 2>/dev/null || true
  rmdir "$prefix/share/acc" 2>/dev/null || true
  # Shared folders go only when ACC's pages were all they held.
  rmdir "$prefix/share/man/man1" "$prefix/share/man" 2>/dev/null || true
  echo "removed ACC from $prefix (ACC's data: see README)"
  exit 0
fi

if [ "$profile" = release ]; then
  cargo build --locked --release --workspace
else
  cargo build --locked --workspace
fi
built="${CARGO_TARGET_DIR:-target}/$profile"
case "$built" in /*) ;; *) built="$PWD/$built" ;; esac
suffix=so
[ "$(uname -s)" = Darwin ] && suffix=dylib

# Put the layout under $1, writing each file whole (a temporary name, then renamed).
stage() {
  local dest="$1" file
  local -a entries=()
  put() { # put SOURCE RELATIVE MODE [STRIP-KIND]
    install -d "$dest/$(dirname "$2")"
    install -m "$3" "$1" "$dest/$2.tmp.$$"
    # Programs and libraries go without their debug information and symbol tables (a release
    # build keeps them, `debug = 1`: 65 MB an executable instead of about 8). A library keeps
    # its dynamic symbols, ACC's marker among them.
    case "${4:-}" in
      program) strip_file --strip-all "$dest/$2.tmp.$$" ;;
      library) strip_file --strip-unneeded "$dest/$2.tmp.$$" ;;
    esac
    mv -f "$dest/$2.tmp.$$" "$dest/$2"
    entries+=("$2")
  }
  strip_file() { # strip_file LINUX-FLAG FILE
    if [ "$(uname -s)" = Darwin ]; then strip -x "$2"; else strip "$1" "$2"; fi
  }
  for bin in acc acc-mcp acc-capture; do
    put "$built/$bin" "bin/$bin" 755 program
  done
  # The manual pages, rendered from the command definitions by the acc just built.
  local pages
  pages="$(mktemp -d)"
  "$built/acc" man --out "$pages" >/dev/null
  for file in "$pages"/*.1; do
    put "$file" "share/man/man1/$(basename "$file")" 644
  done
  rm -rf "$pages"
  for adapter in next_turn claude_inbox qwen_inbox opencode_plugin codex_app_server; do
    file="libacc_adapter_$adapter.$suffix"
    put "$built/$file" "lib/acc/adapters/$file" 644 library
  done
  while IFS= read -r file; do
    put "contracts/$file" "share/acc/contracts/$file" 644
  done < <(cd contracts && find . -type f \( -name '*.toml' -o -name '*.jsonl' \) | sed 's|^\./||' | sort)
  install -d "$dest/share/acc"
  printf '%s\n' "${entries[@]}" > "$dest/$manifest_name.tmp.$$"
  mv -f "$dest/$manifest_name.tmp.$$" "$dest/$manifest_name"
}

if [ -n "$archive" ]; then
  version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
  target="$(rustc -vV | sed -n 's/^host: //p')"
  name="acc-$version-$target"
  mkdir -p "$archive"
  case "$archive" in /*) ;; *) archive="$PWD/$archive" ;; esac
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  stage "$work/$name"
  tar -C "$work" -czf "$archive/$name.tar.gz.tmp" "$name"
  mv -f "$archive/$name.tar.gz.tmp" "$archive/$name.tar.gz"
  (cd "$archive" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
  echo "$archive/$name.tar.gz"
  exit 0
fi

stage "$prefix"
echo "installed ACC into $prefix: $prefix/bin/acc (put $prefix/bin on PATH)"
