# shellcheck shell=bash
# Sourced by .ci/run (and by hand on a dev machine): Podman's Docker-compatible API for the docker provider's tests.
#
# podman_ci_start runs `podman system service --time=0` on a unix socket under one mktemp dir,
# with its storage, runtime state, locks, events log and network config all under that dir (the
# machine's /var/lib/containers/storage, /run and /dev/shm are not used), configured through
# CONTAINERS_CONF and CONTAINERS_STORAGE_CONF, and in a network namespace of its own (rig-<id>-podman,
# only lo): a container started on Podman's default network, as the Docker API's default
# NetworkMode asks, makes a cni-podman0 bridge, iptables chains and ip_forward=1 wherever the
# service runs, so that is never the host's namespace. The unix socket works across namespaces.
#   - explicit ulimits (nofile=20000:20000, nproc=4096:4096): this sandbox lacks
#     CAP_SYS_RESOURCE, so Podman's defaults (nofile=1048576) fail every container start;
#   - netns "none" (containers get only lo, as with the docker provider's default; no CNI bridge),
#     cgroupfs (no systemd here) and the file events logger (no journald).
# It imports the busybox base image as rig/base:busybox and exports RIG_TEST_PODMAN_HOST.
#
# Podman runs each container and each exec session under a `conmon`, which it starts detached:
# they are not the service's children. podman_ci_stop removes (and reports) containers the tests
# left, stops the service by PID, then every conmon that serves this dir's containers (found by
# the paths in their command lines) by PID, deletes the namespace and the dir, and checks the
# host's network namespace is as it was; it returns 1 if anything was left or changed.

PODMAN_CI_DIR=""
PODMAN_CI_PID=""
PODMAN_CI_VARLIB_NEW=""
PODMAN_CI_CNI_NEW=""
PODMAN_CI_NETNS=""
PODMAN_CI_IMAGE="${RIG_TEST_DOCKER_IMAGE:-rig/base:busybox}"
_PODMAN_CI_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=.ci/host-network.sh
source "$_PODMAN_CI_HERE/host-network.sh"
if ! declare -F docker_ci_busybox_tar >/dev/null; then
  # shellcheck source=.ci/docker.sh
  source "$_PODMAN_CI_HERE/docker.sh"
fi

_podman_ci_install() { # .ci/run installs these up front; by hand they may be missing
  command -v podman >/dev/null && [ -x /usr/libexec/podman/catatonit ] && command -v ip >/dev/null && return 0
  echo "installing podman catatonit iproute2"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman catatonit iproute2 >/dev/null
}

podman_ci_cli() { # podman on the same storage and configuration as the service
  CONTAINERS_CONF="$PODMAN_CI_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$PODMAN_CI_DIR/storage.conf" \
    podman "$@"
}

_podman_ci_config() {
  local d=$PODMAN_CI_DIR
  mkdir -p "$d/storage" "$d/run" "$d/tmp" "$d/volumes" "$d/networks"
  cat >"$d/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
netns = "none"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$d/events.log"
tmp_dir = "$d/tmp"
static_dir = "$d/storage/libpod"
volume_path = "$d/volumes"
image_copy_tmp_dir = "$d/tmp"
lock_type = "file"

[network]
network_config_dir = "$d/networks"
EOF
  cat >"$d/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$d/storage"
runroot = "$d/run"
EOF
}

_podman_ci_image() { # the first daemon's copy when it has one (a second faster than building it), else from busybox-static
  if [ -n "${DOCKER_HOST:-}" ] && docker image inspect "$PODMAN_CI_IMAGE" >/dev/null 2>&1; then
    docker save "$PODMAN_CI_IMAGE" | podman_ci_cli load -q >/dev/null && return 0
  fi
  docker_ci_busybox_tar "$PODMAN_CI_DIR" |
    podman_ci_cli import -q -c 'CMD ["/bin/sh"]' - "$PODMAN_CI_IMAGE" >/dev/null
}

podman_ci_start() {
  local t0=$SECONDS _
  _podman_ci_install || return 1
  [ -e /var/lib/containers ] || PODMAN_CI_VARLIB_NEW=1
  [ -e /var/lib/cni ] || PODMAN_CI_CNI_NEW=1
  PODMAN_CI_DIR=$(mktemp -d /tmp/rig-ci-podman.XXXXXX)
  chmod 755 "$PODMAN_CI_DIR"
  host_network_state >"$PODMAN_CI_DIR/host-network.before"
  _podman_ci_config
  PODMAN_CI_NETNS="rig-${PODMAN_CI_DIR##*.}-podman"
  ip netns add "$PODMAN_CI_NETNS" || return 1
  ip -n "$PODMAN_CI_NETNS" link set lo up
  RIG_TEST_PODMAN_HOST="unix://$PODMAN_CI_DIR/podman.sock"
  # A simple command (nsenter execs podman) and no setsid: $! must be the service itself (it writes no pidfile).
  CONTAINERS_CONF="$PODMAN_CI_DIR/containers.conf" CONTAINERS_STORAGE_CONF="$PODMAN_CI_DIR/storage.conf" \
    nsenter --net="/var/run/netns/$PODMAN_CI_NETNS" \
    podman system service --time=0 "$RIG_TEST_PODMAN_HOST" >"$PODMAN_CI_DIR/service.log" 2>&1 </dev/null &
  PODMAN_CI_PID=$!
  for _ in $(seq 1 100); do # the socket appears once the service answers on it
    [ -S "$PODMAN_CI_DIR/podman.sock" ] && break
    kill -0 "$PODMAN_CI_PID" 2>/dev/null || break
    sleep 0.1
  done
  if ! DOCKER_HOST=$RIG_TEST_PODMAN_HOST docker version >/dev/null 2>&1; then
    echo "podman system service did not answer on $RIG_TEST_PODMAN_HOST:" >&2
    cat "$PODMAN_CI_DIR/service.log" >&2
    return 1
  fi
  _podman_ci_image || return 1
  export RIG_TEST_PODMAN_HOST
  DOCKER_HOST=$RIG_TEST_PODMAN_HOST docker version --format \
    '{{.Server.Platform.Name}} {{.Server.Version}} (API {{.Server.APIVersion}}) at '"$RIG_TEST_PODMAN_HOST; ready in $((SECONDS - t0)) s"
}

_podman_ci_stop_pid() { # TERM, wait up to $3 seconds, then KILL; only that PID, and only if it is still $2
  local pid=$1 name=$2 wait_tenths=$(($3 * 10)) _
  [ -n "$pid" ] && grep -q "$name" "/proc/$pid/cmdline" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$wait_tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

podman_ci_conmons() { # pids of the conmon processes serving this dir's containers and exec sessions
  local pid
  [ -n "$PODMAN_CI_DIR" ] || return 0
  for pid in $(pgrep -x conmon); do
    grep -q -F -- "$PODMAN_CI_DIR/" "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
  done
}

podman_ci_stop() {
  local d=$PODMAN_CI_DIR status=0 left conmons pid
  [ -n "$d" ] || return 0
  if left=$(DOCKER_HOST="unix://$d/podman.sock" docker ps -aq 2>/dev/null) && [ -n "$left" ]; then
    echo "!!! containers left on podman by the tests:" >&2
    DOCKER_HOST="unix://$d/podman.sock" docker ps -a >&2 || true
    # shellcheck disable=SC2086 # one id per word
    DOCKER_HOST="unix://$d/podman.sock" docker rm -f $left >/dev/null 2>&1 || true
    status=1
  fi
  _podman_ci_stop_pid "$PODMAN_CI_PID" podman 10
  # What is left are exec sessions' conmons waiting out exit_command_delay; they ignore SIGTERM then.
  conmons=$(podman_ci_conmons)
  if [ -n "$conmons" ]; then
    echo "podman: killing $(echo "$conmons" | wc -w) conmon process(es) it left, by PID" >&2
    for pid in $conmons; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  for pid in $(pgrep -f -- "$d/"); do
    echo "!!! still running from $d: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
    kill -KILL "$pid" 2>/dev/null || true
    status=1
  done
  if [ -n "$PODMAN_CI_NETNS" ]; then
    for pid in $(ip netns pids "$PODMAN_CI_NETNS" 2>/dev/null); do
      echo "!!! still running in $PODMAN_CI_NETNS: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
      kill -KILL "$pid" 2>/dev/null || true
      status=1
    done
    ip netns del "$PODMAN_CI_NETNS" 2>/dev/null || true
    [ ! -e "/var/run/netns/$PODMAN_CI_NETNS" ] || { echo "!!! could not delete $PODMAN_CI_NETNS" >&2; status=1; }
    PODMAN_CI_NETNS=""
  fi
  grep -o " $d[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  # Podman 4.3 keeps its blob-info cache in /var/lib/containers/cache whatever the storage root: gone
  # again if this run made it.
  [ -z "$PODMAN_CI_VARLIB_NEW" ] || rm -rf /var/lib/containers
  # CNI keeps its address leases in /var/lib/cni: only a container on Podman's default network
  # (not rig's NetworkMode none) writes there.
  if [ -n "$PODMAN_CI_CNI_NEW" ] && [ -e /var/lib/cni ]; then
    echo "!!! a container was started on Podman's default (bridge) network; removing /var/lib/cni" >&2
    rm -rf /var/lib/cni
    status=1
  fi
  if [ -f "$d/host-network.before" ]; then
    host_network_check "$d/host-network.before" || status=1
  fi
  rm -rf "$d"
  PODMAN_CI_DIR=""
  unset RIG_TEST_PODMAN_HOST
  return "$status"
}
