#!/usr/bin/env bash
# Prints the README's two screens: `acc status` at 80 columns and `acc watch` in an 80x24
# terminal (tmux), from a made-up room in a temporary directory. Needs `cargo build` first and
# tmux. Times are set back with the test clock variable so the room looks lived in.
set -euo pipefail
cd "$(dirname "$0")/.."
ACC="$PWD/target/debug/acc"
work=$(mktemp -d)
trap 'tmux -S "$work/tmux.sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/demo-room"
cd "$work/demo-room"
git init -q -b main
export ACC_DATA_HOME="$work/data"
declare -A S G
join() { # participant seconds-ago
  read -r S[$1] G[$1] < <(ACC_TEST_CLOCK_OFFSET_SECONDS=-$2 "$ACC" --json attach --participant "$1" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print(d['sessionId'], d['generation'])")
}
as() { # participant seconds-ago args...
  local who=$1 ago=$2
  shift 2
  ACC_TEST_CLOCK_OFFSET_SECONDS=-$ago ACC_SESSION=${S[$who]} ACC_GENERATION=${G[$who]} "$ACC" --json "$@" >/dev/null
}
join claude-code-7f3e9a21 400
join codex-01a22fdc 200
join gemini-5be0c2d4 30
join alice 60
as claude-code-7f3e9a21 400 work --summary "splitting the parser into lexer and grammar modules" --mode edit --hint 'file:src/parser/**'
as claude-code-7f3e9a21 400 claim --resource 'file:src/parser/**' --reason "splitting the parser"
as codex-01a22fdc 200 work --summary "reviewing the store's query planner" --mode review
as codex-01a22fdc 200 claim --mode shared --resource file:src/store/query.rs
as gemini-5be0c2d4 30 work --summary "writing the migration guide" --mode edit
as gemini-5be0c2d4 30 claim --resource file:docs/migration.md --lease 300
as alice 60 request --to claude-code-7f3e9a21 --title "keep the public parse() signature" --detail "downstream crates call it"
as codex-01a22fdc 100 message --to alice --kind question --subject "Can query.rs drop the legacy index?" --body "?"
as alice 50 message --subject "Release freeze starts Friday" --body "room note"

echo '$ acc status'
COLUMNS=80 "$ACC" --color never status
echo
echo '$ acc watch'
tmux -S "$work/tmux.sock" -f /dev/null new-session -d -s w -x 80 -y 24 "$ACC watch"
for _ in $(seq 100); do
  tmux -S "$work/tmux.sock" capture-pane -p -t w | grep -q "latest messages" && break
  sleep 0.05
done
tmux -S "$work/tmux.sock" capture-pane -p -t w
tmux -S "$work/tmux.sock" send-keys -t w q
