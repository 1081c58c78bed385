# shellcheck shell=bash
# Sourced by .ci/run (and by hand on a dev machine): a real two-node Docker Swarm and a registry for the tests.
#
# swarm_ci_start makes, under one mktemp dir,
#   - two network namespaces (rig-<id>-a, rig-<id>-b) joined by a veth pair, 169.254.213.1 and .2;
#   - a dockerd in each (entered with nsenter --net; `ip netns exec` fails on these machines), each
#     in its own UTS namespace so the nodes have their own hostnames (rig-swarm-a, rig-swarm-b),
#     with the same network-inert flags as .ci/docker.sh; `swarm init` on a, `swarm join` from b.
#     Swarm's docker_gwbridge and everything else a node makes lives in its namespace and goes with it;
#   - Debian's docker-registry (v2 API) on the host's 127.0.0.1:<free port>, plain HTTP, and a
#     relay (.ci/netns_relay.py) listening on 127.0.0.1:<that port> inside each node's namespace,
#     so one name, 127.0.0.1:<port>/..., reaches the same registry from the host and from both
#     nodes. Plain HTTP rather than TLS: the registry is only ever reached over loopback, and a
#     daemon trusts a registry's CA only from /etc/docker/certs.d, which every dockerd on the
#     machine shares (the integrator's too); both daemons still name it in --insecure-registry;
#   - the busybox base image pushed there as 127.0.0.1:<port>/rig/base:busybox (node b holds no
#     image: what it runs, it pulls from the registry; nothing else is reachable from a node).
# It exports RIG_TEST_SWARM_MANAGER (the manager's unix socket, usable from the host: a unix
# socket path works across network namespaces), RIG_TEST_SWARM_NODES (JSON: node hostname ->
# that node's own endpoint, for exec on a task's node), RIG_TEST_SWARM_REGISTRY (host:port) and
# RIG_TEST_SWARM_IMAGE. IPVS is missing here: services must use endpoint_mode=dnsrr.
#
# swarm_ci_stop removes what the tests left (and says so: services, registry tags, task
# containers), stops every process it started by PID, deletes both namespaces and the dir, and
# checks the host's network namespace is as it was; it returns 1 if anything was left or changed.

SWARM_CI_DIR=""
SWARM_CI_NODES=(a b)
SWARM_CI_SUBNET="169.254.213"
SWARM_CI_REGISTRY_PID=""
SWARM_CI_RELAY_PID=""
SWARM_CI_PORT=""
declare -A SWARM_CI_NETNS=()
declare -A SWARM_CI_DOCKERD_PID=()
declare -A SWARM_CI_CONTAINERD_PID=()
_SWARM_CI_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=.ci/host-network.sh
source "$_SWARM_CI_HERE/host-network.sh"
# The busybox root filesystem comes from docker.sh's docker_ci_busybox_tar.
if ! declare -F docker_ci_busybox_tar >/dev/null; then
  # shellcheck source=.ci/docker.sh
  source "$_SWARM_CI_HERE/docker.sh"
fi

_swarm_ci_install() { # .ci/run installs these up front; by hand they may be missing
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  command -v nsenter >/dev/null && command -v unshare >/dev/null || missing+=(util-linux)
  command -v ip >/dev/null || missing+=(iproute2)
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

swarm_ci_node_cli() { # $1: node (a|b); the docker CLI on that node's daemon
  local node=$1
  shift
  DOCKER_HOST="unix://$SWARM_CI_DIR/$node/docker.sock" DOCKER_TLS_VERIFY="" DOCKER_CERT_PATH="" docker "$@"
}

_swarm_ci_pid_of() { # $1: pidfile, $2: expected command name; prints the pid once the file names such a process
  local _
  for _ in $(seq 1 100); do
    if [ -s "$1" ] && grep -q "$2" "/proc/$(cat "$1")/cmdline" 2>/dev/null; then
      cat "$1"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

_swarm_ci_namespaces() {
  local id=${SWARM_CI_DIR##*.} node
  for node in "${SWARM_CI_NODES[@]}"; do
    SWARM_CI_NETNS[$node]="rig-$id-$node"
    ip netns add "${SWARM_CI_NETNS[$node]}" || return 1
  done
  # Both ends are made inside the node namespaces: the host namespace never holds either.
  ip link add rs-a netns "${SWARM_CI_NETNS[a]}" type veth peer name rs-b netns "${SWARM_CI_NETNS[b]}" || return 1
  ip -n "${SWARM_CI_NETNS[a]}" addr add "$SWARM_CI_SUBNET.1/24" dev rs-a
  ip -n "${SWARM_CI_NETNS[b]}" addr add "$SWARM_CI_SUBNET.2/24" dev rs-b
  for node in "${SWARM_CI_NODES[@]}"; do
    ip -n "${SWARM_CI_NETNS[$node]}" link set lo up
    ip -n "${SWARM_CI_NETNS[$node]}" link set "rs-$node" up
  done
}

_swarm_ci_registry() {
  local d=$SWARM_CI_DIR
  mkdir -p "$d/registry/data"
  cat >"$d/registry/config.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $d/registry/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$SWARM_CI_PORT
EOF
  # No setsid: $! must be the registry itself (it writes no pidfile).
  docker-registry serve "$d/registry/config.yml" >"$d/registry/registry.log" 2>&1 </dev/null &
  SWARM_CI_REGISTRY_PID=$!
  python3 "$_SWARM_CI_HERE/netns_relay.py" "$SWARM_CI_PORT" "$d/relay.pid" \
    "/var/run/netns/${SWARM_CI_NETNS[a]}" "/var/run/netns/${SWARM_CI_NETNS[b]}" >"$d/relay.log" 2>&1 </dev/null &
  SWARM_CI_RELAY_PID=$!
  local _
  for _ in $(seq 1 100); do
    if python3 - "$SWARM_CI_PORT" <<'EOF' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v2/", timeout=2).read()
EOF
      break
    fi
    sleep 0.1
  done
  if ! kill -0 "$SWARM_CI_REGISTRY_PID" 2>/dev/null; then
    echo "the registry did not start:" >&2
    cat "$d/registry/registry.log" >&2
    return 1
  fi
  if ! _swarm_ci_pid_of "$d/relay.pid" netns_relay >/dev/null; then
    echo "the registry relay into the node namespaces did not start:" >&2
    cat "$d/relay.log" >&2
    return 1
  fi
}

_swarm_ci_dockerd() { # $1: node
  local node=$1 d="$SWARM_CI_DIR/$1" _
  mkdir -p "$d/data" "$d/exec"
  # nsenter and unshare exec (no fork), and so does sh: the pidfile names dockerd itself.
  setsid nsenter --net="/var/run/netns/${SWARM_CI_NETNS[$node]}" unshare --uts \
    sh -c 'hostname "$0" && exec "$@"' "rig-swarm-$node" \
    dockerd --data-root="$d/data" --exec-root="$d/exec" --pidfile="$d/dockerd.pid" \
    -H "unix://$d/docker.sock" --storage-driver=overlay2 \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
    --insecure-registry="127.0.0.1:$SWARM_CI_PORT" \
    --log-level=warn >"$d/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 1 300); do
    swarm_ci_node_cli "$node" version >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! SWARM_CI_DOCKERD_PID[$node]=$(_swarm_ci_pid_of "$d/dockerd.pid" dockerd) ||
    ! swarm_ci_node_cli "$node" version >/dev/null 2>&1; then
    echo "the dockerd of swarm node $node did not answer:" >&2
    cat "$d/dockerd.log" >&2
    return 1
  fi
  SWARM_CI_CONTAINERD_PID[$node]=$(cat "$d/exec/containerd/containerd.pid" 2>/dev/null || true)
}

_swarm_ci_cluster() {
  local token _
  swarm_ci_node_cli a swarm init --advertise-addr "$SWARM_CI_SUBNET.1" \
    --listen-addr "$SWARM_CI_SUBNET.1:2377" >/dev/null || return 1
  token=$(swarm_ci_node_cli a swarm join-token -q worker) || return 1
  swarm_ci_node_cli b swarm join --advertise-addr "$SWARM_CI_SUBNET.2" \
    --listen-addr "$SWARM_CI_SUBNET.2:2377" --token "$token" "$SWARM_CI_SUBNET.1:2377" >/dev/null || return 1
  for _ in $(seq 1 100); do
    [ "$(swarm_ci_node_cli a node ls --format '{{.Status}}' | grep -c Ready)" = 2 ] && return 0
    sleep 0.1
  done
  echo "the swarm did not get two Ready nodes:" >&2
  swarm_ci_node_cli a node ls >&2
  return 1
}

_swarm_ci_image() { # the base image on node a, pushed to the registry under its name
  local image="127.0.0.1:$SWARM_CI_PORT/rig/base:busybox" base=${DOCKER_CI_IMAGE:-rig/base:busybox}
  if [ -n "${DOCKER_HOST:-}" ] && docker image inspect "$base" >/dev/null 2>&1; then
    docker save "$base" | swarm_ci_node_cli a load -q >/dev/null || return 1
    swarm_ci_node_cli a tag "$base" "$image" || return 1
    swarm_ci_node_cli a rmi "$base" >/dev/null || return 1
  else
    docker_ci_busybox_tar "$SWARM_CI_DIR" | swarm_ci_node_cli a import -c 'CMD ["/bin/sh"]' - "$image" >/dev/null ||
      return 1
  fi
  swarm_ci_node_cli a push -q "$image" >/dev/null || return 1
  RIG_TEST_SWARM_IMAGE=$image
}

swarm_ci_start() {
  local t0=$SECONDS
  _swarm_ci_install || return 1
  SWARM_CI_DIR=$(mktemp -d /tmp/rig-ci-swarm.XXXXXX)
  chmod 755 "$SWARM_CI_DIR"
  host_network_state >"$SWARM_CI_DIR/host-network.before"
  SWARM_CI_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  _swarm_ci_namespaces || return 1
  _swarm_ci_registry || return 1
  _swarm_ci_dockerd a || return 1
  _swarm_ci_dockerd b || return 1
  _swarm_ci_cluster || return 1
  _swarm_ci_image || return 1
  export RIG_TEST_SWARM_MANAGER="unix://$SWARM_CI_DIR/a/docker.sock"
  export RIG_TEST_SWARM_NODES="{\"rig-swarm-a\": \"unix://$SWARM_CI_DIR/a/docker.sock\", \"rig-swarm-b\": \"unix://$SWARM_CI_DIR/b/docker.sock\"}"
  export RIG_TEST_SWARM_REGISTRY="127.0.0.1:$SWARM_CI_PORT"
  export RIG_TEST_SWARM_IMAGE
  echo "swarm: manager rig-swarm-a ($RIG_TEST_SWARM_MANAGER), worker rig-swarm-b, registry $RIG_TEST_SWARM_REGISTRY," \
    "image $RIG_TEST_SWARM_IMAGE; ready in $((SECONDS - t0)) s"
}

_swarm_ci_stop_pid() { # TERM, wait up to $3 seconds, then KILL; only that PID, and only if it is still $2
  local pid=$1 name=$2 wait_tenths=$(($3 * 10)) _
  [ -n "$pid" ] && grep -q "$name" "/proc/$pid/cmdline" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$wait_tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "$name ($pid) ignored SIGTERM for $3 s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

_swarm_ci_registry_leftovers() { # repositories and tags other than the base image, one per line
  python3 - "$SWARM_CI_PORT" <<'EOF'
import json, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}/v2"
for repo in json.load(urllib.request.urlopen(f"{base}/_catalog", timeout=5))["repositories"]:
    tags = json.load(urllib.request.urlopen(f"{base}/{repo}/tags/list", timeout=5)).get("tags") or []
    for tag in tags:
        if (repo, tag) != ("rig/base", "busybox"):
            print(f"{repo}:{tag}")
EOF
}

_swarm_ci_leftovers() { # what the tests should have removed; reported, then removed here
  local left=0 services containers tags node _
  if services=$(swarm_ci_node_cli a service ls -q 2>/dev/null) && [ -n "$services" ]; then
    echo "!!! swarm services left by the tests:" >&2
    swarm_ci_node_cli a service ls >&2 || true
    # shellcheck disable=SC2086 # one id per word
    swarm_ci_node_cli a service rm $services >/dev/null || true
    left=1
  fi
  for _ in $(seq 1 100); do # a removed service's task containers go within a few seconds
    containers=""
    for node in "${SWARM_CI_NODES[@]}"; do
      containers+=$(swarm_ci_node_cli "$node" ps -aq 2>/dev/null || true)
    done
    [ -z "$containers" ] && break
    sleep 0.1
  done
  if [ -n "$containers" ]; then
    echo "!!! containers still on the swarm nodes:" >&2
    for node in "${SWARM_CI_NODES[@]}"; do swarm_ci_node_cli "$node" ps -a >&2 || true; done
    left=1
  fi
  if [ -n "$SWARM_CI_REGISTRY_PID" ] && tags=$(_swarm_ci_registry_leftovers 2>/dev/null) && [ -n "$tags" ]; then
    echo "!!! registry tags left by the tests: $tags" >&2
    left=1
  fi
  return "$left"
}

_swarm_ci_stray_processes() { # anything still in a node namespace or running from our dir: reported, then killed by PID
  local left=0 node pid
  for node in "${SWARM_CI_NODES[@]}"; do
    [ -n "${SWARM_CI_NETNS[$node]:-}" ] || continue
    for pid in $(ip netns pids "${SWARM_CI_NETNS[$node]}" 2>/dev/null); do
      echo "!!! still running in ${SWARM_CI_NETNS[$node]}: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
      kill -KILL "$pid" 2>/dev/null || true
      left=1
    done
  done
  for pid in $(pgrep -f -- "$SWARM_CI_DIR/"); do
    echo "!!! still running from $SWARM_CI_DIR: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
    kill -KILL "$pid" 2>/dev/null || true
    left=1
  done
  return "$left"
}

swarm_ci_stop() {
  local d=$SWARM_CI_DIR status=0 node
  [ -n "$d" ] || return 0
  _swarm_ci_leftovers || status=1
  for node in "${SWARM_CI_NODES[@]}"; do # TERM both first: they shut down side by side
    [ -n "${SWARM_CI_DOCKERD_PID[$node]:-}" ] && kill -TERM "${SWARM_CI_DOCKERD_PID[$node]}" 2>/dev/null || true
  done
  for node in "${SWARM_CI_NODES[@]}"; do
    _swarm_ci_stop_pid "${SWARM_CI_DOCKERD_PID[$node]:-}" dockerd 20
    _swarm_ci_stop_pid "${SWARM_CI_CONTAINERD_PID[$node]:-}" containerd 5 # only left if dockerd had to be killed
  done
  _swarm_ci_stop_pid "$SWARM_CI_RELAY_PID" netns_relay 5
  _swarm_ci_stop_pid "$SWARM_CI_REGISTRY_PID" docker-registry 5
  _swarm_ci_stray_processes || status=1
  grep -o " $d[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  for node in "${SWARM_CI_NODES[@]}"; do
    [ -n "${SWARM_CI_NETNS[$node]:-}" ] || continue
    ip netns del "${SWARM_CI_NETNS[$node]}" 2>/dev/null || true
    if [ -e "/var/run/netns/${SWARM_CI_NETNS[$node]}" ]; then
      echo "!!! network namespace ${SWARM_CI_NETNS[$node]} could not be deleted" >&2
      status=1
    fi
  done
  if [ -f "$d/host-network.before" ]; then
    host_network_check "$d/host-network.before" || status=1
  fi
  rm -rf "$d"
  SWARM_CI_DIR=""
  SWARM_CI_NETNS=()
  unset RIG_TEST_SWARM_MANAGER RIG_TEST_SWARM_NODES RIG_TEST_SWARM_REGISTRY RIG_TEST_SWARM_IMAGE
  return "$status"
}
