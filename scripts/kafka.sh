#!/usr/bin/env bash
# Runs a single-node Apache Kafka broker (KRaft, broker+controller in one JVM) on loopback for the
# end-to-end tests. The broker release is pinned and fetched from Maven Central with Maven; nothing
# else is downloaded and no Docker is needed.
#
#   scripts/kafka.sh [options] fetch|up|down|start|stop|status
#
#   fetch   resolve the pinned kafka_2.13 jar and its runtime dependencies into the cache
#   up      fetch, format a fresh data dir, start the broker, wait until it answers metadata
#   down    stop the broker and delete its data dir (idempotent)
#   stop    stop the broker, keep its data dir (for broker-outage tests)
#   start   start the broker again on the same data dir and port, wait until it answers
#   status  exit 0 if the broker process runs and answers metadata requests, 3 otherwise
#
# Options (or the environment variable in brackets):
#   --port N        client listener port on 127.0.0.1            [KAFKA_PORT, default 39092]
#   --controller-port N  KRaft controller listener port          [KAFKA_CONTROLLER_PORT, port+1]
#   --dir D         broker state: config, data, log, pid file    [KAFKA_STATE_DIR,
#                                                                  default .cache/kafka/run-PORT]
#   --version V     Apache Kafka release                          [KAFKA_VERSION, default below]
#   --timeout S     seconds to wait for the broker to answer      [KAFKA_START_TIMEOUT, 120]
#   --sasl-ssl N    (up) also listen for SASL_SSL clients on       [KAFKA_SASL_SSL_PORT, none]
#                   127.0.0.1:N, mechanism SCRAM-SHA-512
# The jar cache lives in .cache/kafka/VERSION/libs (ignored by git); Maven's own local
# repository is whatever Maven is configured with (~/.m2/repository by default).
#
# With --sasl-ssl, `up` generates a throwaway CA and a certificate for 127.0.0.1/localhost signed
# by it (openssl), gives the broker a PEM keystore, and creates the SCRAM-SHA-512 user
# "delaybridge" with a random password when it formats the data dir. The PLAINTEXT listener stays
# (inter-broker and admin use, and `status`). For the clients it writes, mode 0600:
#   STATE_DIR/sasl-ssl/client.properties  librdkafka properties for the SASL_SSL listener
#                                         (bootstrap.servers, security.protocol, sasl.mechanisms,
#                                         sasl.username, sasl.password, ssl.ca.location), usable
#                                         as `kcat -F FILE`
#   STATE_DIR/sasl-ssl/password           the password alone, newline-terminated
#   STATE_DIR/sasl-ssl/ca.pem             the CA certificate (ssl.ca.location)
# `start` and `status` check that listener too; `down` deletes these files with the data dir, and
# `up` without the option deletes any left over. librdkafka before 2.6.1 (this machine's 2.0.2)
# fails SCRAM against Kafka 4.x ("invalid credentials", confluentinc/librdkafka#4895): with it,
# use --version 3.9.1 (docs/real-broker.md, "Secure clusters").
set -euo pipefail

# 4.1.1 is the pinned default: Kafka 4 removed old protocol versions, so it is the stricter test
# of this machine's librdkafka 2.0.2. 3.9.1 passes the same checks (docs/real-broker.md); select
# it with --version 3.9.1. `start` reuses the version the data dir was formatted with.
readonly DEFAULT_KAFKA_VERSION=4.1.1

repo_root=$(cd "$(dirname "$0")/.." && pwd)
port=${KAFKA_PORT:-39092}
controller_port=${KAFKA_CONTROLLER_PORT:-}
state_dir=${KAFKA_STATE_DIR:-}
version=${KAFKA_VERSION:-}
start_timeout_s=${KAFKA_START_TIMEOUT:-120}
sasl_ssl_port=${KAFKA_SASL_SSL_PORT:-}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "kafka.sh: $*" >&2
  exit 1
}

command=""
while (($#)); do
  case $1 in
    --port) port=$2; shift 2 ;;
    --controller-port) controller_port=$2; shift 2 ;;
    --dir) state_dir=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --timeout) start_timeout_s=$2; shift 2 ;;
    --sasl-ssl) sasl_ssl_port=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    fetch | up | down | start | stop | status)
      [[ -z $command ]] || die "only one command allowed (got '$command' and '$1')"
      command=$1; shift ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ -n $command ]] || { usage >&2; die "missing command"; }
[[ $port =~ ^[0-9]+$ ]] || die "--port must be a number, got '$port'"
controller_port=${controller_port:-$((port + 1))}
[[ $controller_port =~ ^[0-9]+$ ]] || die "--controller-port must be a number"
[[ -z $sasl_ssl_port || $sasl_ssl_port =~ ^[0-9]+$ ]] ||
  die "--sasl-ssl must be a port number, got '$sasl_ssl_port'"
state_dir=${state_dir:-$repo_root/.cache/kafka/run-$port}
# A data dir only opens with the release that formatted it: every command but `up` (and `fetch`)
# uses the version recorded there.
version_file=$state_dir/kafka.version
if [[ $command != up && $command != fetch && -f $version_file ]]; then
  recorded=$(cat "$version_file")
  [[ -z $version || $version == "$recorded" ]] ||
    die "$state_dir was formatted by Kafka $recorded, not $version (run 'down' and 'up')"
  version=$recorded
fi
version=${version:-$DEFAULT_KAFKA_VERSION}
cache_dir=$repo_root/.cache/kafka/$version
libs_dir=$cache_dir/libs
pid_file=$state_dir/broker.pid
log_file=$state_dir/broker.log
data_dir=$state_dir/data
sasl_dir=$state_dir/sasl-ssl
sasl_client_properties=$sasl_dir/client.properties
# The SCRAM user `up --sasl-ssl` creates; its password is random per `up`.
readonly sasl_user=delaybridge

log() { echo "kafka.sh: $*"; }

# Log bindings differ per major version: 3.x ships slf4j + reload4j, 4.x ships log4j2.
logging_dependencies() {
  if [[ $version == 3.* ]]; then
    echo "    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>"
  else
    echo "    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.24.3</version></dependency>"
  fi
}

fetch() {
  [[ -f $libs_dir/.complete ]] && return 0
  command -v mvn >/dev/null || die "mvn not found (scripts/setup.sh installs maven)"
  mkdir -p "$cache_dir"
  # Two build dirs may run their tests at once: one fetch per version at a time.
  exec 9>"$cache_dir/.lock"
  flock 9
  if [[ ! -f $libs_dir/.complete ]]; then
    log "fetching Apache Kafka $version from Maven Central into $libs_dir"
    local deps
    deps=$(logging_dependencies)
    sed -e "s|@KAFKA_VERSION@|$version|g" "$repo_root/scripts/kafka/pom.xml.in" |
      awk -v deps="$deps" '{ if ($0 == "@LOGGING_DEPENDENCIES@") print deps; else print }' \
        >"$cache_dir/pom.xml"
    rm -rf "$libs_dir.tmp"
    mvn -B -Dstyle.color=never -f "$cache_dir/pom.xml" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$libs_dir.tmp" >"$cache_dir/maven.log" 2>&1 || {
      tail -n 30 "$cache_dir/maven.log" >&2
      die "Maven could not resolve org.apache.kafka:kafka_2.13:$version (log: $cache_dir/maven.log)"
    }
    ls "$libs_dir.tmp"/kafka_2.13-"$version".jar >/dev/null || die "kafka_2.13-$version.jar missing"
    rm -rf "$libs_dir"
    mv "$libs_dir.tmp" "$libs_dir"
    touch "$libs_dir/.complete"
  fi
  flock -u 9
}

pid_alive() {
  [[ -f $pid_file ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

answers_metadata() {
  kcat -L -b "127.0.0.1:$port" -m 3 -J 2>/dev/null | grep -q '"brokers":\[{' || return 1
  # With a SASL_SSL listener, up/start wait for it too: TLS handshake and SCRAM login work.
  [[ ! -f $sasl_client_properties ]] ||
    kcat -L -F "$sasl_client_properties" -m 3 -J 2>/dev/null | grep -q '"brokers":\[{'
}

# The SASL_SSL port of a broker set up with --sasl-ssl (start/status run without the option).
recorded_sasl_ssl_port() {
  sed -n 's/^bootstrap\.servers=127\.0\.0\.1://p' "$sasl_client_properties"
}

# A throwaway CA and a broker certificate signed by it for 127.0.0.1 and localhost (librdkafka
# verifies the broker's name against the certificate by default), then the SCRAM password and the
# client files. Everything secret is created 0600 in a 0700 directory. The CA key is deleted
# once the broker certificate is signed: nothing else is ever signed with it.
setup_sasl_ssl() {
  command -v openssl >/dev/null || die "openssl not found (scripts/setup.sh installs it)"
  rm -rf "$sasl_dir"
  mkdir -m 700 -p "$sasl_dir"
  (
    umask 077
    cd "$sasl_dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 30 -keyout ca.key -out ca.pem \
      -subj "/CN=DelayBridge throwaway test CA $(date -u +%Y%m%dT%H%M%SZ)" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj /CN=localhost
    printf '%s\n' subjectAltName=IP:127.0.0.1,DNS:localhost basicConstraints=CA:FALSE \
      keyUsage=critical,digitalSignature,keyEncipherment extendedKeyUsage=serverAuth >broker.ext
    openssl x509 -req -days 30 -in broker.csr -CA ca.pem -CAkey ca.key \
      -set_serial "0x$(openssl rand -hex 16)" -extfile broker.ext -out broker.crt
    # Kafka's PEM keystore: the unencrypted PKCS#8 key followed by the certificate.
    cat broker.key broker.crt >broker-keystore.pem
    rm ca.key broker.key broker.csr broker.ext broker.crt
  ) >"$sasl_dir/openssl.log" 2>&1 || {
    cat "$sasl_dir/openssl.log" >&2
    die "generating the test CA and broker certificate in $sasl_dir failed"
  }
  sasl_password=$(openssl rand -hex 24)
  (
    umask 077
    echo "$sasl_password" >"$sasl_dir/password"
    cat >"$sasl_client_properties" <<EOF
bootstrap.servers=127.0.0.1:$sasl_ssl_port
security.protocol=SASL_SSL
sasl.mechanisms=SCRAM-SHA-512
sasl.username=$sasl_user
sasl.password=$sasl_password
ssl.ca.location=$sasl_dir/ca.pem
EOF
  )
}

write_config() {
  mkdir -p "$state_dir"
  local listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
  local advertised=PLAINTEXT://127.0.0.1:$port
  local protocols=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
  if [[ -n $sasl_ssl_port ]]; then
    listeners+=,SASL_SSL://127.0.0.1:$sasl_ssl_port
    advertised+=,SASL_SSL://127.0.0.1:$sasl_ssl_port
    protocols+=,SASL_SSL:SASL_SSL
  fi
  cat >"$state_dir/server.properties" <<EOF
# Generated by scripts/kafka.sh: single-node KRaft broker for DelayBridge's end-to-end tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protocols
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$data_dir
# Tests create every topic with an explicit partition count; a typo must fail, not auto-create.
auto.create.topics.enable=false
num.partitions=1
# One broker: internal topics cannot have more than one replica.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=8
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
# Tests join groups often; the default 3 s initial rebalance delay only slows them down.
group.initial.rebalance.delay.ms=0
EOF
  if [[ -n $sasl_ssl_port ]]; then
    local scram_login=org.apache.kafka.common.security.scram.ScramLoginModule
    cat >>"$state_dir/server.properties" <<EOF
# --sasl-ssl: clients authenticate with SCRAM-SHA-512 over TLS; the user is created at format
# time. Inter-broker and controller traffic stays on PLAINTEXT.
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$scram_login required;
ssl.keystore.type=PEM
ssl.keystore.location=$sasl_dir/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$sasl_dir/ca.pem
EOF
  fi
  cat >"$state_dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
  cat >"$state_dir/log4j2.properties" <<EOF
rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
EOF
}

# The JVM command line shared by the storage tool and the broker; the heap is capped because the
# machine's memory is shared with sanitizer-built tests. GC pauses and safepoints go to
# $state_dir/gc.log: a broker pause shows up as client lateness, and this says when.
java_cmd=(java -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true
  "-Xlog:gc,safepoint:file=$state_dir/gc.log:time,uptime:filecount=2,filesize=8m"
  "-Dlog4j.configuration=file:$state_dir/log4j.properties"
  "-Dlog4j2.configurationFile=$state_dir/log4j2.properties"
  -cp "$libs_dir/*")

format_storage() {
  rm -rf "$data_dir"
  # A random cluster id: 16 bytes, URL-safe base64 without padding (Kafka's Uuid format). Like
  # Kafka's Uuid.randomUuid, never one starting with '-': the tool's argument parser would take
  # it for an option ("--cluster-id: expected one argument"; seen once in CI, 1 run in 64).
  local cluster_id=-
  while [[ $cluster_id == -* ]]; do
    cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  done
  local scram=()
  if [[ -n $sasl_ssl_port ]]; then
    # StorageTool takes the SCRAM password only on its command line, visible to `ps` while it
    # formats: acceptable for this throwaway test broker's generated password.
    scram=(--add-scram "SCRAM-SHA-512=[name=$sasl_user,password=$sasl_password]")
  fi
  "${java_cmd[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$state_dir/server.properties" \
    "${scram[@]}" >"$state_dir/format.log" 2>&1 || {
    cat "$state_dir/format.log" >&2
    die "formatting $data_dir failed"
  }
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_broker() {
  command -v java >/dev/null || die "java not found (scripts/setup.sh installs openjdk-17)"
  command -v kcat >/dev/null || die "kcat not found (scripts/setup.sh installs kcat)"
  if pid_alive; then
    log "broker already running (pid $(cat "$pid_file")) on 127.0.0.1:$port"
    return 0
  fi
  local ports=("$port" "$controller_port")
  [[ ! -f $sasl_client_properties ]] || ports+=("$(recorded_sasl_ssl_port)")
  for p in "${ports[@]}"; do
    port_in_use "$p" && die "port $p on 127.0.0.1 is already in use (choose another with --port)"
  done
  # setsid + redirected stdio: the broker outlives this script and holds none of the caller's
  # pipes (CTest waits for a test's stdout to close).
  setsid "${java_cmd[@]}" kafka.Kafka "$state_dir/server.properties" </dev/null >>"$log_file" 2>&1 &
  echo $! >"$pid_file"
  local deadline=$((SECONDS + start_timeout_s))
  until answers_metadata; do
    if ! pid_alive; then
      tail -n 40 "$log_file" >&2
      rm -f "$pid_file"
      die "broker exited during start-up (log: $log_file)"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$log_file" >&2
      stop_broker
      die "broker did not answer metadata requests within ${start_timeout_s}s (log: $log_file)"
    fi
    sleep 0.5
  done
  log "Apache Kafka $version up on 127.0.0.1:$port (pid $(cat "$pid_file"), log $log_file)"
  [[ ! -f $sasl_client_properties ]] ||
    log "SASL_SSL (SCRAM-SHA-512) on 127.0.0.1:$(recorded_sasl_ssl_port), client properties in" \
      "$sasl_client_properties"
}

stop_broker() {
  if ! pid_alive; then
    rm -f "$pid_file"
    return 0
  fi
  local pid
  pid=$(cat "$pid_file")
  kill -TERM "$pid"
  # A controlled shutdown of a single-node KRaft broker takes a few seconds.
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "broker (pid $pid) ignored SIGTERM for 30 s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$pid_file"
  log "broker on 127.0.0.1:$port stopped"
}

case $command in
  fetch) fetch ;;
  up)
    fetch
    pid_alive && die "a broker is already running from $state_dir (run 'down' first)"
    write_config
    if [[ -n $sasl_ssl_port ]]; then
      setup_sasl_ssl
    else
      rm -rf "$sasl_dir"
    fi
    : >"$log_file"
    format_storage
    echo "$version" >"$version_file"
    start_broker
    ;;
  start)
    fetch
    [[ -f $state_dir/server.properties && -d $data_dir ]] ||
      die "no formatted broker in $state_dir (run 'up' first)"
    start_broker
    ;;
  stop) stop_broker ;;
  down)
    stop_broker
    rm -rf "$data_dir" "$version_file" "$sasl_dir"
    ;;
  status)
    if pid_alive && answers_metadata; then
      log "running: Apache Kafka $version, pid $(cat "$pid_file"), 127.0.0.1:$port"
    elif pid_alive; then
      log "process $(cat "$pid_file") alive but not answering on 127.0.0.1:$port"
      exit 3
    else
      log "not running ($state_dir)"
      exit 3
    fi
    ;;
esac
