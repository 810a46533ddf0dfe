#!/usr/bin/env bash
# Installs the real clients the test suite drives, at pinned versions, into a cache outside the
# repository (default ~/.cache/acc-test-clients, or $ACC_TEST_CACHE). Idempotent: a client whose
# pinned version is already there is not fetched again. Fails loudly; never skips.
set -euo pipefail

CACHE="${ACC_TEST_CACHE:-$HOME/.cache/acc-test-clients}"
TS_SDK=1.32.2
PY_SDK=2.3.0
CODEX=0.169.0
CLAUDE=2.1.328
GEMINI=0.61.0
OPENCODE=1.18.33
# Qwen Code needs Node.js 22 or later (its package's engines), which npm provides as a package;
# both live in a prefix of their own, so the other clients keep running on the system's node.
QWEN=0.24.4
# Kimi Code needs Node.js 22 or later too, and shares that prefix.
KIMI=2.1.0
NODE22=22.23.3

# The terminal and shells the CLI tests run in (acc watch in tmux; completions in zsh and fish;
# bash and script(1) are part of every Debian system). They come from the distribution's
# packages, at the distribution's version; each must run, or this fails.
missing=()
for tool in tmux zsh fish; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-test-clients: apt-get install ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
    echo "install-test-clients: ${missing[*]} missing and neither root nor sudo to install them" >&2
    exit 1
  fi
  "${as_root[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
tmux -V >/dev/null
zsh --version >/dev/null
fish --version >/dev/null
command -v script >/dev/null || { echo "install-test-clients: script(1) (util-linux) is missing" >&2; exit 1; }

mkdir -p "$CACHE"
cd "$CACHE"

have_npm() { # package version
  local manifest="$CACHE/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -e "process.exit(require('$manifest').version === '$2' ? 0 : 1)"
}

want=()
have_npm @modelcontextprotocol/sdk "$TS_SDK" || want+=("@modelcontextprotocol/sdk@$TS_SDK")
have_npm @openai/codex "$CODEX" || want+=("@openai/codex@$CODEX")
have_npm @anthropic-ai/claude-code "$CLAUDE" || want+=("@anthropic-ai/claude-code@$CLAUDE")
have_npm @google/gemini-cli "$GEMINI" || want+=("@google/gemini-cli@$GEMINI")
have_npm opencode-ai "$OPENCODE" || want+=("opencode-ai@$OPENCODE")
if [ "${#want[@]}" -gt 0 ]; then
  echo "install-test-clients: npm install ${want[*]} into $CACHE" >&2
  [ -f package.json ] || echo '{"name":"acc-test-clients","private":true}' > package.json
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE" "${want[@]}" >&2
fi

have_node22() { # package version
  local manifest="$CACHE/node22/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -e "process.exit(require('$manifest').version === '$2' ? 0 : 1)"
}
want=()
have_node22 node "$NODE22" || want+=("node@$NODE22")
have_node22 @qwen-code/qwen-code "$QWEN" || want+=("@qwen-code/qwen-code@$QWEN")
have_node22 @moonshot-ai/kimi-code "$KIMI" || want+=("@moonshot-ai/kimi-code@$KIMI")
if [ "${#want[@]}" -gt 0 ]; then
  echo "install-test-clients: npm install ${want[*]} into $CACHE/node22" >&2
  mkdir -p "$CACHE/node22"
  [ -f "$CACHE/node22/package.json" ] || echo '{"name":"acc-test-clients-node22","private":true}' > "$CACHE/node22/package.json"
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/node22" "${want[@]}" >&2
fi

# OpenCode installs its plugin package into every configuration folder that has a plugin, from
# the npm registry, and waits at start until that install gives up when there is no registry. The
# tests copy this install (made the way OpenCode makes it) into each throwaway configuration
# folder, so no test's OpenCode reaches beyond loopback.
seed="$CACHE/opencode-seed"
if ! node -e "process.exit(require('$seed/node_modules/@opencode-ai/plugin/package.json').version === '$OPENCODE' ? 0 : 1)" 2>/dev/null; then
  echo "install-test-clients: npm install @opencode-ai/plugin@$OPENCODE into $seed" >&2
  rm -rf "$seed" && mkdir -p "$seed"
  printf '{\n  "dependencies": {\n    "@opencode-ai/plugin": "%s"\n  }\n}\n' "$OPENCODE" > "$seed/package.json"
  npm install --no-audit --no-fund --loglevel=error --prefix "$seed" >&2
fi

if ! "$CACHE/py/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$PY_SDK')" 2>/dev/null; then
  echo "install-test-clients: pip install mcp==$PY_SDK into $CACHE/py" >&2
  python3 -m venv "$CACHE/py"
  "$CACHE/py/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_SDK" >&2
fi

# Check that each client really runs at its pinned version, in a temporary folder of the check's
# own: OpenCode's runtime unpacks its native libraries into $TMPDIR at every start and never
# removes them, so without this each run would leave megabytes in /tmp.
probe_tmp=$(mktemp -d)
trap 'rm -rf "$probe_tmp"' EXIT
export TMPDIR="$probe_tmp"
node -e "const p=require('$CACHE/node_modules/@modelcontextprotocol/sdk/package.json'); if (p.version!=='$TS_SDK') process.exit(1)"
"$CACHE/py/bin/python" -c "import mcp" 
"$CACHE/node_modules/.bin/codex" --version | grep -q "codex-cli $CODEX" || { echo "codex $CODEX does not run" >&2; exit 1; }
HOME="$CACHE/home" "$CACHE/node_modules/.bin/claude" --version | grep -q "^$CLAUDE" || { echo "claude $CLAUDE does not run" >&2; exit 1; }
HOME="$CACHE/home" "$CACHE/node_modules/.bin/gemini" --version | grep -q "^$GEMINI" || { echo "gemini $GEMINI does not run" >&2; exit 1; }
HOME="$CACHE/home" "$CACHE/node_modules/.bin/opencode" --version | grep -q "^$OPENCODE" || { echo "opencode $OPENCODE does not run" >&2; exit 1; }
"$CACHE/node22/node_modules/.bin/node" --version | grep -q "^v$NODE22$" || { echo "node $NODE22 does not run" >&2; exit 1; }
HOME="$CACHE/home" PATH="$CACHE/node22/node_modules/.bin:$PATH" "$CACHE/node22/node_modules/.bin/qwen" --version | grep -q "^$QWEN" || { echo "qwen $QWEN does not run" >&2; exit 1; }
HOME="$CACHE/home" KIMI_CODE_NO_AUTO_UPDATE=1 PATH="$CACHE/node22/node_modules/.bin:$PATH" "$CACHE/node22/node_modules/.bin/kimi" --version | grep -q "^$KIMI" || { echo "kimi $KIMI does not run" >&2; exit 1; }
echo "$CACHE"
