#!/usr/bin/env bash
# Builds the `acc` of an earlier commit (the writer of a store fixture under
# tests/fixtures/stores/) into the test cache, once: $ACC_TEST_CACHE or ~/.cache/acc-test-clients,
# as acc-at-<commit>/acc. The layout tests open stores upgraded by this build with it. Prints the
# binary's path. Needs the commit in this clone's history (a shallow clone must fetch it).
set -euo pipefail
COMMIT="${1:?usage: build-earlier-acc.sh COMMIT}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${ACC_TEST_CACHE:-$HOME/.cache/acc-test-clients}"
OUT="$CACHE/acc-at-$COMMIT"
if [ -x "$OUT/acc" ] && "$OUT/acc" --version >/dev/null 2>&1; then
  echo "$OUT/acc"
  exit 0
fi
if ! git -C "$REPO" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
  echo "build-earlier-acc: commit $COMMIT is not in this clone's history (a shallow clone? git fetch --unshallow)" >&2
  exit 1
fi
SOURCE="$(mktemp -d)"
TARGET="$CACHE/acc-at-$COMMIT-target"
trap 'rm -rf "$SOURCE" "$TARGET"' EXIT
git -C "$REPO" archive "$COMMIT" | tar -x -C "$SOURCE"
echo "build-earlier-acc: building acc at $COMMIT (once; kept in $OUT)" >&2
# Only the binary is kept (stripped): no debug information and no incremental caches, which
# would take disk for the length of the build and nothing after.
CARGO_TARGET_DIR="$TARGET" CARGO_PROFILE_DEV_DEBUG=false CARGO_INCREMENTAL=0 cargo build --locked --quiet --manifest-path "$SOURCE/Cargo.toml" -p acc-host --bin acc >&2
mkdir -p "$OUT"
cp "$TARGET/debug/acc" "$OUT/acc.partial"
strip --strip-all "$OUT/acc.partial"
mv "$OUT/acc.partial" "$OUT/acc"
echo "$OUT/acc"
