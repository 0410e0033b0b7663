#!/bin/sh
# One-shot job of the `temporal-setup` compose service (temporalio/admin-tools image): waits for the
# Temporal server, creates the namespace if it is missing and registers the search attributes the
# browserTask workflow sets (src/contract/search-attributes.ts). Idempotent: an existing namespace
# or search attribute is left as it is, so it runs on every `docker compose up`.
#
# Environment (set in docker-compose.yml):
#   TEMPORAL_ADDRESS             frontend to configure (default temporal:7233)
#   TEMPORAL_NAMESPACE           namespace the worker uses (default "default")
#   TEMPORAL_NAMESPACE_RETENTION retention of closed workflows when the namespace is created (default 72h)
set -eu

ADDRESS=${TEMPORAL_ADDRESS:-temporal:7233}
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
RETENTION=${TEMPORAL_NAMESPACE_RETENTION:-72h}
MAX_ATTEMPTS=${TEMPORAL_SETUP_MAX_ATTEMPTS:-90}
SLEEP_SECONDS=${TEMPORAL_SETUP_SLEEP_SECONDS:-2}

# name:type, as in src/contract/search-attributes.ts.
SEARCH_ATTRIBUTES="BrowserAIExecutionId:Keyword BrowserAIStatus:Keyword BrowserAIProject:Keyword BrowserAIAwaitingInput:Bool BrowserAIAwaitingInputSince:Datetime BrowserAIKind:Keyword BrowserAIEndMs:Int"

log() { echo "temporal-setup: $*"; }

# retry DESCRIPTION COMMAND...: runs COMMAND until it succeeds. An "already exists" answer counts
# as success; "already exists and has different type" and "cannot have more than N search
# attributes of type T" (SQL visibility has a fixed number of columns per type) fail at once:
# waiting does not change them. Output of the last failed attempt is shown if it never succeeds.
retry() {
  what=$1
  shift
  attempt=1
  while :; do
    if out=$("$@" 2>&1); then
      [ -z "$out" ] || echo "$out"
      return 0
    fi
    if echo "$out" | grep -qi 'different type'; then
      log "${what}: registered with another type; remove it or pick another name:" >&2
      echo "$out" >&2
      return 1
    fi
    if echo "$out" | grep -qi 'cannot have more than'; then
      log "${what}: the namespace has no free search attribute of this type (SQL visibility has 10 Keyword, 3 Bool, 3 Datetime, 3 Int, 3 Double, 3 Text, 3 KeywordList); remove one it does not need (temporal operator search-attribute remove) or use Elasticsearch visibility:" >&2
      echo "$out" >&2
      return 1
    fi
    if echo "$out" | grep -qi 'already exists'; then
      log "${what}: already exists"
      return 0
    fi
    if [ "$attempt" -ge "$MAX_ATTEMPTS" ]; then
      log "${what}: failed after ${MAX_ATTEMPTS} attempts:" >&2
      echo "$out" >&2
      return 1
    fi
    log "${what}: not yet (attempt ${attempt}/${MAX_ATTEMPTS})"
    attempt=$((attempt + 1))
    sleep "$SLEEP_SECONDS"
  done
}

log "waiting for the Temporal server at ${ADDRESS}"
retry "cluster health" temporal operator cluster health --address "$ADDRESS"

if temporal operator namespace describe --namespace "$NAMESPACE" --address "$ADDRESS" >/dev/null 2>&1; then
  log "namespace ${NAMESPACE}: exists"
else
  log "namespace ${NAMESPACE}: creating (retention ${RETENTION})"
  retry "namespace ${NAMESPACE}" \
    temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$ADDRESS"
fi

for attribute in $SEARCH_ATTRIBUTES; do
  name=${attribute%%:*}
  type=${attribute#*:}
  # Re-adding a name with the same type is a no-op for the CLI and server; a name already
  # registered with another type fails the job (fix it by hand: changing it silently is unsafe).
  retry "search attribute ${name} (${type})" \
    temporal operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type "$type" --address "$ADDRESS"
done

# The worker starts right after this job: make sure the frontend serves the namespace and every
# attribute is visible there, not just stored.
retry "namespace ${NAMESPACE} serving" \
  temporal workflow list --namespace "$NAMESPACE" --limit 1 --address "$ADDRESS"
listed=$(temporal operator search-attribute list --namespace "$NAMESPACE" --address "$ADDRESS")
for attribute in $SEARCH_ATTRIBUTES; do
  name=${attribute%%:*}
  type=${attribute#*:}
  if ! echo "$listed" | grep -w "$name" | grep -qiw "$type"; then
    log "search attribute ${name} (${type}) is not listed on namespace ${NAMESPACE}:" >&2
    echo "$listed" >&2
    exit 1
  fi
done

log "namespace ${NAMESPACE} ready with search attributes: ${SEARCH_ATTRIBUTES}"
