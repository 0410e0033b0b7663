#!/bin/sh
# One-shot job of the `temporal-schema` compose service (temporalio/admin-tools image): creates the
# `temporal` and `temporal_visibility` databases in PostgreSQL if missing, then creates or upgrades
# their schemas to the version this admin-tools image ships. Every step is idempotent, so it runs
# on each `docker compose up`; after bumping the Temporal image tags it performs the upgrade
# (go one minor version at a time, as Temporal requires).
#
# temporal-sql-tool reads its connection from the environment set in docker-compose.yml:
# SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD.
set -eu

: "${SQL_PLUGIN:?}" "${SQL_HOST:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
SCHEMA_ROOT=${SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}

# PostgreSQL reports healthy before it may accept every connection (and the first one after
# initdb can race a restart), so the first statement is retried briefly.
attempt=1
until temporal-sql-tool --db temporal create-database; do
  if [ "$attempt" -ge 30 ]; then
    echo "temporal-schema: PostgreSQL at ${SQL_HOST}:${SQL_PORT:-5432} is not reachable, giving up" >&2
    exit 1
  fi
  echo "temporal-schema: waiting for PostgreSQL at ${SQL_HOST}:${SQL_PORT:-5432} (attempt $attempt/30)"
  attempt=$((attempt + 1))
  sleep 2
done

setup_database() {
  db=$1
  schema_dir=$2
  echo "temporal-schema: database ${db}, schema ${schema_dir}"
  temporal-sql-tool --db "$db" create-database
  # Only creates the schema_version bookkeeping tables (CREATE TABLE IF NOT EXISTS) on a new database.
  temporal-sql-tool --db "$db" setup-schema --version 0.0
  # Applies every versioned migration newer than the database's current version.
  temporal-sql-tool --db "$db" update-schema --schema-dir "$schema_dir"
}

setup_database temporal "${SCHEMA_ROOT}/temporal/versioned"
setup_database temporal_visibility "${SCHEMA_ROOT}/visibility/versioned"

echo "temporal-schema: done"
