#!/usr/bin/env bash
# Runs every ACC test: builds the binaries the end-to-end tests drive, then the whole suite.
# Fails loudly; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")"

# The real clients the suite drives (MCP SDKs, Claude Code, Codex), pinned, cached outside the repo.
scripts/install-test-clients.sh >/dev/null
# The PostgreSQL server programs the room tests start their own clusters with.
scripts/install-postgres.sh >/dev/null
# The acc that wrote the layout-0 store fixture: the layout tests open upgraded stores with it.
scripts/build-earlier-acc.sh 99cb396 >/dev/null
# Every binary and library: the end-to-end tests load the adapter cdylibs from target/debug.
cargo build --workspace --locked
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --locked --no-fail-fast "$@"
else
  echo "test.sh: cargo-nextest is not installed; running the same suite with cargo test" >&2
  cargo test --workspace --locked --no-fail-fast "$@"
fi
