#!/usr/bin/env bash
# A real Apache Kafka 4.x cluster on loopback for the broker tests (test/kafka/), without
# Docker: the broker's jars come from Maven Central (scripts/kafka/pom.xml), each node is one
# JVM running broker and controller together (KRaft), and all state (jars, configs, data,
# logs, PIDs) lives in .kafka/ (gitignored).
#
#   scripts/kafka.sh start [1|3]   format fresh storage, start the nodes (default 3), wait until
#                                  the cluster answers metadata with every broker; prints the
#                                  bootstrap list. Already running with that many nodes: reused.
#   scripts/kafka.sh start --secure [1|3]
#                                  the same with security (also KAFKA_SECURE=1): clients reach the
#                                  nodes over SASL_SSL (SCRAM-SHA-512, TLS with a CA made at start),
#                                  brokers talk to each other and to the controllers on their own
#                                  SASL_PLAINTEXT listeners (PLAIN, user `broker`), and the
#                                  StandardAuthorizer enforces ACLs: `admin` is a super user, `app`
#                                  may write, read and describe topics `allowed-*` and use groups
#                                  `app-*`, nothing else. Passwords are drawn at start; the client
#                                  settings (bootstrap list, CA and client-certificate paths, users
#                                  and passwords) are written to <state>/secure/client.json (mode 600).
#   scripts/kafka.sh secure-config the path of that client.json (fails unless the cluster is secure)
#   scripts/kafka.sh stop          stop the nodes this script started (their PID files): SIGTERM,
#                                  then SIGKILL after KAFKA_STOP_TIMEOUT seconds
#   scripts/kafka.sh status        which nodes run; exit 0 only if all of them do
#   scripts/kafka.sh brokers       the bootstrap list (e.g. 127.0.0.1:19092,127.0.0.1:19093,...)
#   scripts/kafka.sh kill-node I   SIGKILL node I (1-based), as a crash
#   scripts/kafka.sh stop-node I   stop node I as an operator does in a rolling restart: SIGTERM
#                                  (a controlled shutdown that hands its leaderships over), wait
#                                  until it is gone (SIGKILL after KAFKA_STOP_TIMEOUT seconds)
#   scripts/kafka.sh start-node I  start node I again on its existing storage, wait for the cluster
#   scripts/kafka.sh logs [I]      print the server logs (of node I)
#   scripts/kafka.sh fetch         only fetch the jars
#   scripts/kafka.sh proxy-map     with KAFKA_PROXY_PORT at start: the routes a fault proxy needs,
#                                  listenPort>127.0.0.1:proxiedPort per node, comma-separated
#
# Environment: KAFKA_NODES (default node count, 3), KAFKA_PORT (first client port, 19092;
# node I listens on KAFKA_PORT+I-1 for clients and KAFKA_PORT+100+I-1 for the controller
# quorum), KAFKA_STATE_DIR (default <repo>/.kafka), KAFKA_HEAP_OPTS (-Xms256m -Xmx512m),
# KAFKA_START_TIMEOUT (seconds, 120), KAFKA_STOP_TIMEOUT (seconds, 20), KAFKA_SECURE (1: start
# --secure; a secure node also listens on KAFKA_PORT+200+I-1 for the other brokers),
# KAFKA_LIB_DIR (the jars, default <state>/lib: clusters in two state directories can share them).
# KAFKA_PROXY_PORT=<base> (at start, opt-in, not with --secure): each node gets a third listener,
# PROXIED, on KAFKA_PORT+200+I-1, advertised as 127.0.0.1:<base+I-1>, where a fault proxy
# (test/lib/fault-proxy.js) listens and forwards to it. A client bootstrapping through the
# proxy ports is told the proxy's addresses and so goes through it for everything; clients of
# the ordinary ports, inter-broker replication and the controller quorum stay direct.
# Groups of KIP-848's protocol (group.protocol 'consumer') have their session timeout set here, on the
# brokers: 10 s (Kafka's default 45 s would hold a dead member's partitions that long in every test).
# Needs java (17+) and mvn on PATH (and openssl for --secure). Only 127.0.0.1 is ever used.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POM_DIR="${ROOT}/scripts/kafka"
STATE="${KAFKA_STATE_DIR:-${ROOT}/.kafka}"
LIB="${KAFKA_LIB_DIR:-${STATE}/lib}"
SEC="${STATE}/secure"
PORT="${KAFKA_PORT:-19092}"
HEAP="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-20}"

log() { echo "kafka.sh: $*" >&2; }
die() { log "$*"; exit 1; }

client_port() { echo $((PORT + $1 - 1)); }
controller_port() { echo $((PORT + 100 + $1 - 1)); }
proxied_port() { echo $((PORT + 200 + $1 - 1)); }
# The proxy base port of the cluster in .kafka/ (empty if started without KAFKA_PROXY_PORT).
state_proxy() {
  if [[ -f "${STATE}/cluster.env" ]]; then (. "${STATE}/cluster.env"; echo "${PROXY_PORT:-}"); fi
}
PROXY="${KAFKA_PROXY_PORT:-}"
internal_port() { echo $((PORT + 200 + $1 - 1)); }
node_dir() { echo "${STATE}/node$1"; }

# 1 if the cluster in the state directory was started with --secure.
state_secure() {
  if [[ -f "${STATE}/cluster.env" ]]; then (. "${STATE}/cluster.env"; echo "${SECURE:-0}"); else echo 0; fi
}

# The node count of the cluster in .kafka/ (0 if none was started).
state_nodes() {
  if [[ -f "${STATE}/cluster.env" ]]; then (. "${STATE}/cluster.env"; echo "${NODES}"); else echo 0; fi
}

brokers_of() {
  local n=$1 i list=""
  for ((i = 1; i <= n; i++)); do list+="${list:+,}127.0.0.1:$(client_port "$i")"; done
  echo "$list"
}

# The PID of node I if that process is alive and is really our node (not a reused PID).
node_pid() {
  local pidfile pid
  pidfile="$(node_dir "$1")/pid"
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/${pid}/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -qF -- "kafka.Kafka $(node_dir "$1")/server.properties" || return 1
  echo "$pid"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ---- jars ----

fetch() {
  local stamp want
  want="$(sha256sum "${POM_DIR}/pom.xml" | cut -d' ' -f1)"
  stamp="${LIB}/.pom.sha256"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  command -v mvn >/dev/null || die "mvn is not on PATH (needed once, to fetch the Kafka jars)"
  log "fetching the Kafka jars with Maven into ${LIB}"
  rm -rf "$LIB"
  mkdir -p "$LIB" "$STATE"
  if ! mvn -q -B -f "${POM_DIR}/pom.xml" dependency:copy-dependencies "-DoutputDirectory=${LIB}" >"${STATE}/mvn.log" 2>&1; then
    cat "${STATE}/mvn.log" >&2
    rm -rf "$LIB"
    die "mvn dependency:copy-dependencies failed"
  fi
  echo "$want" >"$stamp"
}

# ---- configuration ----

write_log4j() {
  cat >"${STATE}/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.zk.name = org.apache.kafka.clients
logger.zk.level = WARN
EOF
}

write_config() {
  local i=$1 n=$2 dir voters="" j min_isr
  dir="$(node_dir "$i")"
  for ((j = 1; j <= n; j++)); do voters+="${voters:+,}${j}@127.0.0.1:$(controller_port "$j")"; done
  min_isr=$((n >= 3 ? 2 : 1))
  mkdir -p "${dir}/data"
  {
    echo "# Written by scripts/kafka.sh: node ${i} of ${n}, broker and controller in one process."
    if ((SECURE)); then
      secure_listeners "$i"
    else
      local listeners advertised protocols
      listeners="PLAINTEXT://127.0.0.1:$(client_port "$i"),CONTROLLER://127.0.0.1:$(controller_port "$i")"
      advertised="PLAINTEXT://127.0.0.1:$(client_port "$i")"
      protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
      if [[ -n "$PROXY" ]]; then
        listeners+=",PROXIED://127.0.0.1:$(proxied_port "$i")"
        advertised+=",PROXIED://127.0.0.1:$((PROXY + i - 1))"
        protocols+=",PROXIED:PLAINTEXT"
      fi
      cat <<EOF
listeners=${listeners}
advertised.listeners=${advertised}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=${protocols}
EOF
    fi
  } >"${dir}/server.properties"
  ((SECURE)) && chmod 600 "${dir}/server.properties"
  cat >>"${dir}/server.properties" <<EOF
process.roles=broker,controller
node.id=${i}
controller.quorum.voters=${voters}
log.dirs=${dir}/data
num.partitions=1
default.replication.factor=${n}
auto.create.topics.enable=true
offsets.topic.replication.factor=${n}
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=${n}
transaction.state.log.min.isr=${min_isr}
transaction.state.log.num.partitions=8
share.coordinator.state.topic.replication.factor=${n}
share.coordinator.state.topic.min.isr=${min_isr}
group.initial.rebalance.delay.ms=0
group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=10000
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
log.retention.hours=-1
log.retention.bytes=-1
EOF
}

# ---- security (--secure) ----

# A throwaway CA, a broker certificate for 127.0.0.1 (PKCS#12 keystore), a client certificate
# with an encrypted key (for clients that present one: the listener requests but does not
# require it) and random passwords, all in <state>/secure (mode 700).
make_secrets() {
  command -v openssl >/dev/null || die "openssl is not on PATH (needed for --secure)"
  rm -rf "$SEC"
  mkdir -p "$SEC"
  chmod 700 "$SEC"
  local j
  {
    for j in BROKER_PASSWORD ADMIN_PASSWORD APP_PASSWORD KEYSTORE_PASSWORD CLIENT_KEY_PASSWORD; do
      echo "${j}=$(openssl rand -hex 16)"
    done
  } >"${SEC}/passwords.env"
  chmod 600 "${SEC}/passwords.env"
  # shellcheck disable=SC1091
  . "${SEC}/passwords.env"
  (
    cd "$SEC"
    set -e
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7 -sha256 -subj "/CN=kdp test CA $(date +%s)"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=127.0.0.1"
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out broker.pem -days 7 -sha256 -extfile server.ext
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker -out broker.p12 \
      -passout "pass:${KEYSTORE_PASSWORD}"
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl req -newkey rsa:2048 -keyout client.key -passout "pass:${CLIENT_KEY_PASSWORD}" -out client.csr -subj "/CN=kdp-client"
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 7 -sha256 -extfile client.ext
    rm -f ./*.csr ./*.ext ca.srl broker.key
    chmod 600 ./*
  ) >"${STATE}/openssl.log" 2>&1 || { cat "${STATE}/openssl.log" >&2; die "openssl failed"; }
}

# The listener part of a secure node's server.properties.
secure_listeners() {
  local i=$1 plain
  # shellcheck disable=SC1091
  . "${SEC}/passwords.env"
  plain="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"broker\" password=\"${BROKER_PASSWORD}\" user_broker=\"${BROKER_PASSWORD}\";"
  cat <<EOF
listeners=CLIENT://127.0.0.1:$(client_port "$i"),INTERNAL://127.0.0.1:$(internal_port "$i"),CONTROLLER://127.0.0.1:$(controller_port "$i")
advertised.listeners=CLIENT://127.0.0.1:$(client_port "$i"),INTERNAL://127.0.0.1:$(internal_port "$i")
controller.listener.names=CONTROLLER
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CLIENT:SASL_SSL,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.internal.sasl.enabled.mechanisms=PLAIN
listener.name.internal.plain.sasl.jaas.config=${plain}
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=${plain}
listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.client.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.client.ssl.keystore.type=PKCS12
listener.name.client.ssl.keystore.location=${SEC}/broker.p12
listener.name.client.ssl.keystore.password=${KEYSTORE_PASSWORD}
listener.name.client.ssl.truststore.type=PEM
listener.name.client.ssl.truststore.location=${SEC}/ca.pem
listener.name.client.ssl.client.auth=requested
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:broker;User:admin
allow.everyone.if.no.acl.found=false
EOF
}

# The admin's Java client settings (for KafkaReady) and the clients' settings (client.json).
write_client_configs() {
  local n=$1
  # shellcheck disable=SC1091
  . "${SEC}/passwords.env"
  cat >"${SEC}/admin.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${ADMIN_PASSWORD}";
ssl.truststore.type=PEM
ssl.truststore.location=${SEC}/ca.pem
EOF
  cat >"${SEC}/client.json" <<EOF
{
  "brokers": "$(brokers_of "$n")",
  "securityProtocol": "sasl_ssl",
  "saslMechanism": "SCRAM-SHA-512",
  "caLocation": "${SEC}/ca.pem",
  "certificateLocation": "${SEC}/client.pem",
  "keyLocation": "${SEC}/client.key",
  "keyPassword": "${CLIENT_KEY_PASSWORD}",
  "users": {
    "admin": { "username": "admin", "password": "${ADMIN_PASSWORD}" },
    "app": { "username": "app", "password": "${APP_PASSWORD}" }
  },
  "allowedTopicPrefix": "allowed-",
  "allowedGroupPrefix": "app-"
}
EOF
  chmod 600 "${SEC}/admin.properties" "${SEC}/client.json"
}

# User:app's ACLs, as KafkaReady takes them: principal, resource type, pattern type, name, operation.
APP_ACLS=(
  User:app TOPIC PREFIXED allowed- WRITE
  User:app TOPIC PREFIXED allowed- READ
  User:app TOPIC PREFIXED allowed- DESCRIBE
  User:app GROUP PREFIXED app- READ
  User:app GROUP PREFIXED app- DESCRIBE
)

JAVA_OPTS=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -Djava.awt.headless=true)

check_ports() {
  local p
  local ports=("$(client_port "$1")" "$(controller_port "$1")")
  if ((SECURE)); then ports+=("$(internal_port "$1")"); fi
  if [[ -n "$PROXY" ]]; then ports+=("$(proxied_port "$1")"); fi
  for p in "${ports[@]}"; do
    if port_in_use "$p"; then die "port ${p} of node ${1} is already in use (another Kafka? set KAFKA_PORT)"; fi
  done
}

launch() {
  local i=$1 dir
  dir="$(node_dir "$i")"
  check_ports "$i"
  # setsid: the node outlives the shell (and npm) that started it and is not hit by signals to
  # that process group; it writes its own PID before exec'ing the JVM.
  # shellcheck disable=SC2086
  setsid bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' _ "$dir" \
    java ${HEAP} "${JAVA_OPTS[@]}" "-Dlog4j2.configurationFile=${STATE}/log4j2.properties" \
    "-Dkafka.logs.dir=${dir}" -cp "${LIB}/*" kafka.Kafka "${dir}/server.properties" \
    </dev/null >>"${dir}/server.log" 2>&1 9>&- &
  local waited=0
  while [[ ! -s "${dir}/pid" ]] && ((waited < 50)); do sleep 0.1; waited=$((waited + 1)); done
  [[ -s "${dir}/pid" ]] || die "node ${i} did not start"
}

# Waits until the cluster answers metadata with all `n` brokers; fails early if a node dies.
# A secure cluster is asked as `admin`, and the ACLs given after `n` are created once it answers.
wait_ready() {
  local n=$1 started=$SECONDS i ready status extra=()
  shift
  if ((SECURE)); then extra=("${SEC}/admin.properties" "$@"); fi
  java -cp "${LIB}/*" -Dlog4j2.configurationFile="${STATE}/log4j2-quiet.properties" \
    "${POM_DIR}/KafkaReady.java" "$(brokers_of "$n")" "$n" "$((START_TIMEOUT * 1000))" "${extra[@]}" >&2 2>"${STATE}/ready.log" 9>&- &
  ready=$!
  while kill -0 "$ready" 2>/dev/null; do
    for ((i = 1; i <= n; i++)); do
      if ! node_pid "$i" >/dev/null; then
        kill "$ready" 2>/dev/null || true
        wait "$ready" 2>/dev/null || true
        log "node ${i} exited while starting"
        return 1
      fi
    done
    sleep 0.5
  done
  status=0
  wait "$ready" || status=$?
  if ((status != 0)); then
    cat "${STATE}/ready.log" >&2
    return 1
  fi
  log "cluster answered metadata after $((SECONDS - started)) s of waiting"
}

print_logs() {
  local i n=${1:-} last=${2:-}
  local nodes
  nodes=$(state_nodes)
  for ((i = 1; i <= nodes; i++)); do
    [[ -n "$n" && "$n" != "$i" ]] && continue
    local f
    f="$(node_dir "$i")/server.log"
    [[ -f "$f" ]] || continue
    echo "===== node ${i}: ${f}${last:+ (last ${last} lines)} ====="
    if [[ -n "$last" ]]; then tail -n "$last" "$f"; else cat "$f"; fi
  done
}

# ---- commands ----

cmd_start() {
  if [[ "${1:-}" == --secure ]]; then SECURE=1; shift; fi
  local n=${1:-${KAFKA_NODES:-3}} i running=0 nodes
  [[ "$n" == 1 || "$n" == 3 ]] || die "node count must be 1 or 3, not ${n}"
  command -v java >/dev/null || die "java is not on PATH (JDK 17+ needed)"
  mkdir -p "$STATE"
  exec 9>"${STATE}/.lock"
  flock -n 9 || die "another kafka.sh start/stop is running"

  nodes=$(state_nodes)
  for ((i = 1; i <= nodes; i++)); do node_pid "$i" >/dev/null && running=$((running + 1)); done
  if ((running > 0)); then
    if ((running == nodes && nodes == n)) && [[ "$(state_secure)" == "$SECURE" && "$(state_proxy)" == "$PROXY" ]]; then
      log "already running (${n} nodes$(if ((SECURE)); then echo ", secure: ${SEC}/client.json"; fi)): reusing it"
      brokers_of "$n"
      return 0
    fi
    die "a cluster of ${nodes} nodes is partly or differently running (${running} up): run 'scripts/kafka.sh stop' first"
  fi

  for ((i = 1; i <= n; i++)); do check_ports "$i"; done
  local t0=$SECONDS
  fetch
  write_log4j
  printf 'status = error\nrootLogger.level = ERROR\n' >"${STATE}/log4j2-quiet.properties"
  for ((i = 1; i <= 3; i++)); do rm -rf "$(node_dir "$i")"; done
  rm -f "${STATE}/cluster.env"

  # A cluster id as kafka-storage random-uuid makes one: 16 random bytes, URL-safe base64,
  # no padding, not starting with '-'.
  local cluster_id
  while :; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    [[ "$cluster_id" != -* ]] && break
  done
  if [[ -n "$PROXY" ]]; then
    ((SECURE)) && die "KAFKA_PROXY_PORT and --secure do not go together"
    [[ "$PROXY" =~ ^[0-9]+$ ]] || die "KAFKA_PROXY_PORT must be a port number, not ${PROXY}"
    for ((i = 1; i <= n; i++)); do
      if port_in_use "$((PROXY + i - 1))"; then die "proxy port $((PROXY + i - 1)) is already in use"; fi
    done
  fi
  printf 'NODES=%s\nBROKERS=%s\nCLUSTER_ID=%s\nSECURE=%s\nPROXY_PORT=%s\n' "$n" "$(brokers_of "$n")" "$cluster_id" "$SECURE" "$PROXY" >"${STATE}/cluster.env"

  # SCRAM users go into the metadata log at format time (KRaft).
  local scram=()
  rm -rf "$SEC"
  if ((SECURE)); then
    make_secrets
    write_client_configs "$n"
    # shellcheck disable=SC1091
    . "${SEC}/passwords.env"
    scram=(--add-scram "SCRAM-SHA-512=[name=admin,password=${ADMIN_PASSWORD}]"
      --add-scram "SCRAM-SHA-512=[name=app,password=${APP_PASSWORD}]")
  fi

  local pids=() failed=0
  for ((i = 1; i <= n; i++)); do
    write_config "$i" "$n"
    java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="${STATE}/log4j2-quiet.properties" -cp "${LIB}/*" \
      kafka.tools.StorageTool format -t "$cluster_id" -c "$(node_dir "$i")/server.properties" "${scram[@]}" \
      >"$(node_dir "$i")/format.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 1; i <= n; i++)); do
    if ! wait "${pids[$((i - 1))]}"; then
      failed=1
      log "formatting node ${i} failed:"
      cat "$(node_dir "$i")/format.log" >&2
    fi
  done
  ((failed == 0)) || die "could not format the storage"
  log "formatted ${n} node(s) in $((SECONDS - t0)) s (cluster ${cluster_id})"

  for ((i = 1; i <= n; i++)); do launch "$i"; done
  local acls=()
  if ((SECURE)); then acls=("${APP_ACLS[@]}"); fi
  if ! wait_ready "$n" "${acls[@]}"; then
    log "the cluster did not come up; its logs (last 80 lines each):"
    print_logs "" 80 >&2
    cmd_stop >&2 || true
    exit 1
  fi
  log "started ${n} node(s) in $((SECONDS - t0)) s; state in ${STATE}"
  if ((SECURE)); then log "secure: SASL_SSL (SCRAM-SHA-512) for clients; their settings (with passwords) in ${SEC}/client.json"; fi
  brokers_of "$n"
}

# SIGTERM to the given nodes, SIGKILL to those still alive after STOP_TIMEOUT seconds.
stop_nodes() {
  local i pid left
  declare -A pids=()
  for i in "$@"; do
    if pid=$(node_pid "$i"); then
      pids[$i]=$pid
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  local deadline=$((SECONDS + STOP_TIMEOUT))
  while :; do
    left=0
    for i in "${!pids[@]}"; do
      if kill -0 "${pids[$i]}" 2>/dev/null && node_pid "$i" >/dev/null; then left=$((left + 1)); else unset "pids[$i]"; fi
    done
    ((left == 0)) && break
    if ((SECONDS >= deadline)); then
      for i in "${!pids[@]}"; do
        log "node ${i} (pid ${pids[$i]}) still running after ${STOP_TIMEOUT} s: SIGKILL"
        kill -KILL "${pids[$i]}" 2>/dev/null || true
      done
      deadline=$((SECONDS + 10))
      STOP_TIMEOUT=10
    fi
    sleep 0.2
  done
  for i in "$@"; do rm -f "$(node_dir "$i")/pid"; done
}

cmd_stop() {
  local nodes i list=()
  mkdir -p "$STATE"
  nodes=$(state_nodes)
  for ((i = 1; i <= 3; i++)); do [[ -f "$(node_dir "$i")/pid" ]] && list+=("$i"); done
  if ((${#list[@]} == 0)); then
    log "not running"
    return 0
  fi
  local t0=$SECONDS
  stop_nodes "${list[@]}"
  log "stopped ${#list[@]} node(s) in $((SECONDS - t0)) s"
}

cmd_status() {
  local nodes i up=0
  nodes=$(state_nodes)
  if ((nodes == 0)); then echo "no cluster in ${STATE}"; return 1; fi
  for ((i = 1; i <= nodes; i++)); do
    if pid=$(node_pid "$i"); then
      echo "node ${i}: running, pid ${pid}, 127.0.0.1:$(client_port "$i")"
      up=$((up + 1))
    else
      echo "node ${i}: stopped"
    fi
  done
  ((up == nodes))
}

cmd_kill_node() {
  local i=${1:?node number} pid
  pid=$(node_pid "$i") || die "node ${i} is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$(node_dir "$i")/pid"
  log "node ${i} (pid ${pid}) killed"
}

cmd_stop_node() {
  local i=${1:?node number} t0=$SECONDS
  node_pid "$i" >/dev/null || die "node ${i} is not running"
  stop_nodes "$i"
  rm -f "$(node_dir "$i")/pid"
  log "node ${i} stopped (controlled shutdown) in $((SECONDS - t0)) s"
}

cmd_start_node() {
  local i=${1:?node number} nodes
  nodes=$(state_nodes)
  ((i >= 1 && i <= nodes)) || die "no node ${i} in a cluster of ${nodes}"
  node_pid "$i" >/dev/null && die "node ${i} is already running"
  PROXY=$(state_proxy)
  local t0=$SECONDS
  SECURE=$(state_secure)
  launch "$i"
  wait_ready "$nodes" || { print_logs "$i" 80 >&2; die "node ${i} did not rejoin"; }
  log "node ${i} restarted and rejoined in $((SECONDS - t0)) s"
}

SECURE=0
if [[ "${KAFKA_SECURE:-0}" == 1 ]]; then SECURE=1; fi

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  secure-config)
    [[ "$(state_secure)" == 1 && -f "${SEC}/client.json" ]] || die "no secure cluster in ${STATE}"
    echo "${SEC}/client.json"
    ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  brokers)
    n=$(state_nodes)
    ((n > 0)) || die "no cluster in ${STATE}"
    brokers_of "$n"
    ;;
  kill-node) cmd_kill_node "${2:-}" ;;
  stop-node) cmd_stop_node "${2:-}" ;;
  start-node) cmd_start_node "${2:-}" ;;
  logs) print_logs "${2:-}" ;;
  fetch) mkdir -p "$STATE"; fetch ;;
  proxy-map)
    n=$(state_nodes)
    ((n > 0)) || die "no cluster in ${STATE}"
    base=$(state_proxy)
    [[ -n "$base" ]] || die "the cluster in ${STATE} was started without KAFKA_PROXY_PORT"
    map=""
    for ((i = 1; i <= n; i++)); do map+="${map:+,}$((base + i - 1))>127.0.0.1:$(proxied_port "$i")"; done
    echo "$map"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
