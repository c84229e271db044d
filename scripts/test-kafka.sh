#!/usr/bin/env bash
# npm run test:kafka: the broker suite (test/kafka/*.test.js) against a real Kafka cluster.
#
# With KAFKA_BROKERS set (a bootstrap list), the suite runs against that cluster. Without it, a
# 3-node cluster already started by scripts/kafka.sh (npm run kafka:start) is reused and left
# running; otherwise one is started here and stopped again at the end, whatever the tests did.
# Arguments go to tap (e.g. a single file: npm run test:kafka -- test/kafka/java-agreement.test.js).
# The crash test kills and restarts nodes only of a cluster scripts/kafka.sh runs.
# test/kafka/confluent.test.js runs the agreement, exactly-once and order tests again on
# Confluent's client (each in a child process) when it is installed (bash scripts/install-confluent.sh).
# A cluster started here has the fault proxy mode on (KAFKA_PROXY_PORT, default KAFKA_PORT+300,
# i.e. 19392-19394): KAFKA_PROXY (the routes, scripts/kafka.sh proxy-map) is exported for the
# fault scenarios through the proxy (test/kafka/faults-resets, faults-blackhole); a reused
# cluster started without it, or KAFKA_BROKERS without KAFKA_PROXY, skips those two.
# The fault scenarios append their figures to KDP_FAULTS_SUMMARY (a fresh temp file here);
# the last line printed is their summary (faults: N scenarios, lost ..., longest stall ...).
#
# The secure tests (test/kafka/secure*.test.js) need a cluster with SASL_SSL and ACLs: with
# KAFKA_SECURE_BROKERS and KAFKA_SECURE_CONFIG set they use that one; otherwise, when they are
# among the files to run, a 1-node secure cluster is started here (scripts/kafka.sh start
# --secure 1, state in KAFKA_SECURE_STATE_DIR, default .kafka-secure/, clients on port
# KAFKA_SECURE_PORT, default 19492) and stopped at the end. KAFKA_SECURE_TESTS=0 skips it (the secure tests then report a skip).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

started=0
secure_started=0
tap_pid=0
STATE_DIR="${KAFKA_STATE_DIR:-${ROOT}/.kafka}"
SECURE_STATE_DIR="${KAFKA_SECURE_STATE_DIR:-${ROOT}/.kafka-secure}"
secure_sh() {
  KAFKA_PORT="${KAFKA_SECURE_PORT:-19492}" KAFKA_STATE_DIR="${SECURE_STATE_DIR}" KAFKA_LIB_DIR="${STATE_DIR}/lib" \
    KAFKA_NODES=1 KAFKA_PROXY_PORT= scripts/kafka.sh "$@"
}
cleanup() {
  if ((tap_pid)) && kill -0 "$tap_pid" 2>/dev/null; then
    kill -TERM "$tap_pid" 2>/dev/null
    wait "$tap_pid" 2>/dev/null
  fi
  [[ -n "${summary_file:-}" ]] && rm -f "$summary_file"
  if ((started)); then
    started=0
    scripts/kafka.sh stop || true
  fi
  if ((secure_started)); then
    secure_started=0
    secure_sh stop || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

if [[ ! -f build/index.js ]]; then
  echo "test-kafka: build/ is missing: run npm run build first" >&2
  exit 1
fi

t0=$SECONDS
if [[ -z "${KAFKA_BROKERS:-}" ]]; then
  if scripts/kafka.sh status >/dev/null 2>&1 && [[ "$(scripts/kafka.sh brokers 2>/dev/null | tr ',' '\n' | wc -l)" == 3 ]]; then
    KAFKA_BROKERS="$(scripts/kafka.sh brokers)"
    echo "test-kafka: reusing the running cluster ${KAFKA_BROKERS} (npm run kafka:stop stops it)"
  else
    echo "test-kafka: starting a 3-node cluster (scripts/kafka.sh start 3)"
    started=1
    export KAFKA_PROXY_PORT="${KAFKA_PROXY_PORT:-$((${KAFKA_PORT:-19092} + 300))}"
    if ! KAFKA_BROKERS="$(scripts/kafka.sh start 3)"; then
      echo "test-kafka: the cluster did not start"
      exit 1
    fi
    echo "test-kafka: cluster ${KAFKA_BROKERS} up in $((SECONDS - t0)) s"
  fi
fi
export KAFKA_BROKERS
if [[ -z "${KAFKA_PROXY:-}" ]] && scripts/kafka.sh status >/dev/null 2>&1 && [[ "$(scripts/kafka.sh brokers 2>/dev/null)" == "$KAFKA_BROKERS" ]]; then
  KAFKA_PROXY="$(scripts/kafka.sh proxy-map 2>/dev/null || true)"
fi
if [[ -n "${KAFKA_PROXY:-}" ]]; then
  export KAFKA_PROXY
  echo "test-kafka: fault proxy routes ${KAFKA_PROXY}"
else
  echo "test-kafka: no fault proxy routes (cluster without KAFKA_PROXY_PORT): the proxied fault scenarios are skipped"
fi
summary_file="$(mktemp "${TMPDIR:-/tmp}/kdp-faults-summary.XXXXXX")"
export KDP_FAULTS_SUMMARY="$summary_file"

if (($# > 0)); then files=("$@"); else files=(test/kafka/*.test.js); fi

wants_secure=0
for f in "${files[@]}"; do [[ "$(basename "$f")" == secure*.test.js ]] && wants_secure=1; done
if ((wants_secure)) && [[ -z "${KAFKA_SECURE_BROKERS:-}" && "${KAFKA_SECURE_TESTS:-1}" != 0 ]]; then
  ts=$SECONDS
  echo "test-kafka: starting a secure 1-node cluster (SASL_SSL, ACLs) on port ${KAFKA_SECURE_PORT:-19492}"
  # The jars are fetched once, into the plain cluster's state directory, and shared.
  scripts/kafka.sh fetch
  if secure_sh status >/dev/null 2>&1 && [[ "$(. "${SECURE_STATE_DIR}/cluster.env"; echo "${SECURE:-0}")" == 1 ]]; then
    KAFKA_SECURE_BROKERS="$(secure_sh brokers)"
    echo "test-kafka: reusing the running secure cluster ${KAFKA_SECURE_BROKERS}"
  else
    secure_started=1
    if ! KAFKA_SECURE_BROKERS="$(secure_sh start --secure 1)"; then
      echo "test-kafka: the secure cluster did not start"
      exit 1
    fi
    echo "test-kafka: secure cluster ${KAFKA_SECURE_BROKERS} up in $((SECONDS - ts)) s"
  fi
  KAFKA_SECURE_CONFIG="$(secure_sh secure-config)"
  export KAFKA_SECURE_BROKERS KAFKA_SECURE_CONFIG
fi
t1=$SECONDS
# Files named on the command line run although package.json's tap config excludes test/kafka/
# from the default `npm test` set.
# In the background, so that a signal to this script stops the tests and the cluster at once.
node_modules/.bin/tap --timeout=900 "${files[@]}" &
tap_pid=$!
wait "$tap_pid"
status=$?
tap_pid=0
echo "test-kafka: broker suite wall time $((SECONDS - t1)) s (with cluster start $((SECONDS - t0)) s)"
summary="$(node test/kafka/lib/faults.js --summary "$summary_file")"
rm -f "$summary_file"
[[ -n "$summary" ]] && echo "$summary"
exit "$status"
