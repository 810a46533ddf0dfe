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
  # The end-to-end tests whose behaviour depends on the store, again on a room on PostgreSQL
  # (every test world starts a server of its own: acc_tests::BACKEND_SWITCH). The scenarios run
  # on both backends in the run above. Left out here are the tests of SQLite's own file (its
  # WAL, fsyncs, writers' queue, a locked or foreign store file) and of human output's golden
  # files (a room adds its line to status).
  if [ "$#" -eq 0 ]; then
    ACC_TEST_BACKEND=postgres cargo nextest run -p acc-tests --test e2e --locked --no-fail-fast -E '
      test(/^(concurrency|cli_contract|mcp|guards|guard_paths|router|status_view|peer_text|hooks|hooks_real)::/)
      - test(=concurrency::a_writer_that_never_lets_go_of_the_queue_bounds_the_others_and_blocks_no_reader)
      - test(=cli_contract::ids_are_taken_by_a_unique_prefix_and_ambiguity_is_refused_with_the_candidates)
      - test(=hooks::a_locked_or_interrupted_store_fails_open_within_the_budget_and_stays_intact)
      - test(=hooks::doctor_reports_a_store_of_another_version_and_keeps_going)'
  fi
else
  echo "test.sh: cargo-nextest is not installed; running the same suite with cargo test" >&2
  cargo test --workspace --locked --no-fail-fast "$@"
  if [ "$#" -eq 0 ]; then
    ACC_TEST_BACKEND=postgres cargo test -p acc-tests --test e2e --locked --no-fail-fast -- \
      concurrency:: cli_contract:: mcp:: guards:: guard_paths:: router:: status_view:: peer_text:: hooks:: hooks_real:: \
      --skip a_writer_that_never_lets_go_of_the_queue_bounds_the_others_and_blocks_no_reader \
      --skip ids_are_taken_by_a_unique_prefix_and_ambiguity_is_refused_with_the_candidates \
      --skip a_locked_or_interrupted_store_fails_open_within_the_budget_and_stays_intact \
      --skip doctor_reports_a_store_of_another_version_and_keeps_going
  fi
fi
