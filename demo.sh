#!/usr/bin/env bash
# ACC's main job on its embedded default (a SQLite store, no server to start): two MCP
# participants, each with its own acc-mcp process, exchange a request and a reply and take
# claims. Nothing outside a temporary directory is touched.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --quiet --locked -p acc --bins --example mcp_demo
exec target/debug/examples/mcp_demo
