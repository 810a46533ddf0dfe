#!/usr/bin/env bash
# Makes sure the PostgreSQL server programs the tests start (initdb, postgres) and setpriv are
# on this machine: from the distribution's packages when they are missing (PostgreSQL 13 or
# later; Debian 12 gives 15). The tests create, start and stop their own clusters in temporary
# directories (tests/src/pg.rs); nothing here starts a server. Fails loudly; never skips.
set -euo pipefail

have_server() {
  local dir
  dir="$(pg_config --bindir 2>/dev/null || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then return 0; fi
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then return 0; fi
  done
  return 1
}

if ! have_server || ! command -v setpriv >/dev/null 2>&1; then
  echo "install-postgres: apt-get install postgresql util-linux" >&2
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
    echo "install-postgres: the PostgreSQL server programs are missing and neither root nor sudo can install them" >&2
    exit 1
  fi
  "${as_root[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends postgresql util-linux >&2
fi
have_server || { echo "install-postgres: initdb and postgres are still missing" >&2; exit 1; }
# Run as root, the server runs as the account the package creates.
if [ "$(id -u)" -eq 0 ] && ! id -u postgres >/dev/null 2>&1; then
  echo "install-postgres: running as root, but there is no postgres account for the server to run as" >&2
  exit 1
fi
