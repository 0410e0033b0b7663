#!/usr/bin/env bash
# Release check on a production-shaped Temporal (CONTRIBUTING.md, "Release checks"): the Temporal
# server at the version docker-compose.yml names, built from its Go module, on PostgreSQL 15 from
# Debian's packages with SQL visibility, set up by deploy/temporal-schema.sh and
# deploy/temporal-setup.sh unchanged; then the test files that depend on visibility run against it
# (TEMPORAL_TEST_ADDRESS). The dev server the suite uses otherwise is SQLite, whose visibility takes
# what PostgreSQL's refuses: Keyword values over 255 characters, IDs over 255 characters.
#
# Needs: Go (1.24 or later) with access to the Go module proxy, Debian's apt-get (or PostgreSQL 15
# installed), the `temporal` CLI on PATH, and `npm ci` done. Building the server takes 14 minutes of
# CPU the first time (about 7 minutes on 2 idle cores); the binaries are kept in the cache
# directory, and a run with them takes about 3.5 minutes.
#
#   scripts/release-check-postgres.sh                      # the default test files
#   scripts/release-check-postgres.sh lib/test/x.test.js   # other compiled test files
#
# Environment:
#   RELEASE_CHECK_CACHE   where the built binaries are kept (default .tools/release-check, gitignored)
#   RELEASE_CHECK_PORT    the Temporal frontend's gRPC port (default 17233; the server uses a few above it)
#   RELEASE_CHECK_PGPORT  PostgreSQL's port (default 55432)
#   RELEASE_CHECK_KEEP=1  leave the server and PostgreSQL running at the end (prints how to stop them)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
started_at=$(date +%s)
log() { echo "release-check: $*"; }
elapsed() { echo "$(($(date +%s) - started_at)) s"; }

# The version docker-compose.yml runs (image temporalio/server:X.Y.Z).
VERSION=$(sed -n 's/^ *image: temporalio\/server:\([0-9.]*\).*/\1/p' docker-compose.yml | head -n 1)
[ -n "$VERSION" ] || { log "no temporalio/server image in docker-compose.yml" >&2; exit 1; }
CACHE=$(mkdir -p "${RELEASE_CHECK_CACHE:-$ROOT/.tools/release-check}" && cd "${RELEASE_CHECK_CACHE:-$ROOT/.tools/release-check}" && pwd)
BIN="$CACHE/temporal-server-$VERSION"
PORT=${RELEASE_CHECK_PORT:-17233}
PGPORT=${RELEASE_CHECK_PGPORT:-55432}
NAMESPACE=default
TESTS=("$@")
if [ ${#TESTS[@]} -eq 0 ]; then
  # The test files that read visibility: the waiting list, learning from closed workflows, lists by
  # search attribute, schedules; and the limits SQL visibility sets (sql-visibility.test.ts).
  TESTS=(
    lib/test/sql-visibility.test.js
    lib/test/code-loop.test.js
    lib/test/visibility-durations.test.js
    lib/test/current-status.test.js
    lib/test/saved-tasks.test.js
  )
fi

# 1. The server and temporal-sql-tool, built from the Go module at that version (kept for later runs).
if [ ! -x "$BIN/server" ] || [ ! -x "$BIN/temporal-sql-tool" ]; then
  command -v go >/dev/null || { log "Go is needed to build the Temporal server (https://go.dev/dl/)" >&2; exit 1; }
  log "building temporalio/server $VERSION from go.temporal.io/server@v$VERSION (14 minutes of CPU)"
  mkdir -p "$BIN"
  GOBIN="$BIN" nice go install "go.temporal.io/server/cmd/server@v$VERSION" "go.temporal.io/server/cmd/tools/sql@v$VERSION"
  mv "$BIN/sql" "$BIN/temporal-sql-tool"
  log "built in $(elapsed)"
fi
# The schema files deploy/temporal-schema.sh applies, from the same module (admin-tools ships them at /etc/temporal/schema).
MODULE_DIR=$(go mod download -json "go.temporal.io/server@v$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
SCHEMA_ROOT="$MODULE_DIR/schema/postgresql/v12"
[ -d "$SCHEMA_ROOT" ] || { log "no schema at $SCHEMA_ROOT" >&2; exit 1; }

# 2. PostgreSQL 15 from Debian's packages, a throw-away cluster on its own port.
PG_BIN=/usr/lib/postgresql/15/bin
if [ ! -x "$PG_BIN/postgres" ]; then
  log "installing PostgreSQL 15 (apt-get install postgresql-15)"
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql-15 >/dev/null
fi
WORK=$(mktemp -d "$CACHE/run.XXXXXX")
# PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user the package created.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" -ne 0 ] || chown postgres "$WORK"
chmod 755 "$WORK"

SERVER_PID=
cleanup() {
  local code=$?
  if [ "${RELEASE_CHECK_KEEP:-}" = 1 ]; then
    log "left running: Temporal at 127.0.0.1:$PORT (pid $SERVER_PID), PostgreSQL on port $PGPORT; stop them with:"
    log "  kill $SERVER_PID; $PG_BIN/pg_ctl -D $WORK/pgdata stop; rm -rf $WORK"
    exit "$code"
  fi
  [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; }
  as_pg "$PG_BIN/pg_ctl" -D "$WORK/pgdata" -m fast stop >/dev/null 2>&1 || true
  if [ "$code" -ne 0 ]; then
    log "failed after $(elapsed); the server's log: $WORK/temporal.log (kept)"
  else
    rm -rf "$WORK"
  fi
  exit "$code"
}
trap cleanup EXIT

log "PostgreSQL 15 on 127.0.0.1:$PGPORT"
as_pg "$PG_BIN/initdb" -D "$WORK/pgdata" -U postgres --auth=trust -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$WORK/pgdata" -l "$WORK/postgres.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $PGPORT -k $WORK -c max_connections=200" start >/dev/null
# As the compose file's postgres image does with POSTGRES_USER/POSTGRES_PASSWORD.
psql -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE ROLE temporal LOGIN SUPERUSER PASSWORD 'temporal'"

# 3. The schemas, by deploy/temporal-schema.sh as the temporal-schema service runs it.
log "deploy/temporal-schema.sh"
PATH="$BIN:$PATH" SQL_PLUGIN=postgres12 SQL_HOST=127.0.0.1 SQL_PORT=$PGPORT SQL_USER=temporal \
  SQL_PASSWORD=temporal SCHEMA_ROOT="$SCHEMA_ROOT" sh deploy/temporal-schema.sh >"$WORK/schema.log" 2>&1 ||
  { cat "$WORK/schema.log" >&2; exit 1; }

# 4. The server, configured as the compose file's `temporal` service (the image renders its built-in
# config template from these variables; the binary has the same template), on ports from $PORT up.
log "Temporal server $VERSION on 127.0.0.1:$PORT"
env DB=postgres12 DB_PORT="$PGPORT" POSTGRES_SEEDS=127.0.0.1 POSTGRES_USER=temporal POSTGRES_PWD=temporal \
  BIND_ON_IP=127.0.0.1 TEMPORAL_BROADCAST_ADDRESS=127.0.0.1 LOG_LEVEL=warn \
  DYNAMIC_CONFIG_FILE_PATH="$ROOT/deploy/dynamicconfig.yaml" \
  FRONTEND_GRPC_PORT="$PORT" FRONTEND_HTTP_PORT=$((PORT + 10)) FRONTEND_MEMBERSHIP_PORT=$((PORT + 100)) \
  HISTORY_GRPC_PORT=$((PORT + 1)) HISTORY_MEMBERSHIP_PORT=$((PORT + 101)) \
  MATCHING_GRPC_PORT=$((PORT + 2)) MATCHING_MEMBERSHIP_PORT=$((PORT + 102)) \
  INTERNAL_FRONTEND_GRPC_PORT=$((PORT + 3)) INTERNAL_FRONTEND_HTTP_PORT=$((PORT + 13)) \
  INTERNAL_FRONTEND_MEMBERSHIP_PORT=$((PORT + 103)) \
  WORKER_GRPC_PORT=$((PORT + 6)) WORKER_MEMBERSHIP_PORT=$((PORT + 106)) \
  "$BIN/server" --allow-no-auth start >"$WORK/temporal.log" 2>&1 &
SERVER_PID=$!

# 5. The namespace and search attributes, by deploy/temporal-setup.sh as the temporal-setup service runs it.
log "deploy/temporal-setup.sh"
TEMPORAL_ADDRESS="127.0.0.1:$PORT" TEMPORAL_NAMESPACE=$NAMESPACE TEMPORAL_NAMESPACE_RETENTION=72h \
  sh deploy/temporal-setup.sh >"$WORK/setup.log" 2>&1 || { cat "$WORK/setup.log" >&2; exit 1; }
log "ready after $(elapsed)"

# 6. The tests, against that server.
npm run build --silent
log "running ${TESTS[*]}"
test_started=$(date +%s)
# As `npm test` runs them (scripts/run-tests.ts: one workflow bundle, several files at a time), all
# in the namespace deploy/temporal-setup.sh set up.
TEMPORAL_TEST_ADDRESS="127.0.0.1:$PORT" TEMPORAL_TEST_NAMESPACE=$NAMESPACE \
  node_modules/.bin/node lib/scripts/run-tests.js "${TESTS[@]}"
log "green: tests $(($(date +%s) - test_started)) s, in all $(elapsed)"
