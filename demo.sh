#!/usr/bin/env bash
# ACC's main job on its embedded default (a SQLite store, no server): two participants
# coordinate at a shell in a throwaway project. Nothing outside a temporary directory is touched.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --quiet --bins --locked -p acc-host
ACC="$PWD/target/debug/acc"

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
export ACC_DATA_HOME="$demo/data"
mkdir -p "$demo/project/src" && cd "$demo/project"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
as() { local who=$1; shift; step "acc $* # as $who"; env ACC_SESSION="${SESSION[$who]}" ACC_GENERATION="${GENERATION[$who]}" "$ACC" "$@" || true; }

declare -A SESSION GENERATION
for who in alice bob; do
  step "acc attach --participant $who --json"
  out=$("$ACC" attach --participant "$who" --json)
  echo "$out" | sed -E 's/"generation":"[^"]+"/"generation":"<shown once, kept private>"/'
  SESSION[$who]=$(echo "$out" | sed -E 's/.*"sessionId":"([^"]+)".*/\1/')
  GENERATION[$who]=$(echo "$out" | sed -E 's/.*"generation":"([^"]+)".*/\1/')
done

as alice work --summary "split the store module" --mode edit --hint 'file:src/store/**'
as alice claim --resource 'file:src/store/**' --reason "splitting the store"
as bob work --summary "fix a query in the store" --mode edit --hint file:src/store/query.rs
echo "# bob's batch touches alice's tree, so nothing is claimed (exit 5):"
as bob claim --resource file:src/cli.rs --resource file:src/store/query.rs
as bob claim --resource file:src/cli.rs
step "acc status"
"$ACC" status
as alice release --all
as bob claim --resource file:src/store/query.rs
as alice request --to bob --title "review the store split" --detail "moved queries into src/store/query.rs"
as bob inbox
id=$(env ACC_SESSION="${SESSION[bob]}" ACC_GENERATION="${GENERATION[bob]}" "$ACC" inbox --json | sed -E 's/.*"messageId":"([^"]+)".*/\1/')
echo "# ack refuses a request that needs an answer (exit 5):"
as bob ack --message "$id"
as bob inbox --message "$id"
as bob reply --message "$id" --body "looks right; query.rs needs a test"
as alice inbox
step "acc sync --scope history"
"$ACC" sync --scope history
