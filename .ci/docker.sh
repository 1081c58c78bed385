# shellcheck shell=bash
# Sourced by .ci/run: a private, network-inert dockerd for the tests, and the busybox base image.
#
# The daemon gets its own data/exec roots under a mktemp dir and these flags, so it never
# touches host networking: no docker0 bridge, no iptables rules, no ip_forward change.
# docker_ci_start exports DOCKER_HOST; docker_ci_stop stops the daemon by its PID and
# removes everything it made.

DOCKER_CI_DIR=""
DOCKERD_PID=""
CONTAINERD_PID=""
DOCKER_CI_IMAGE="rig/base:busybox"

docker_ci_start() {
  DOCKER_CI_DIR=$(mktemp -d /tmp/rig-ci-docker.XXXXXX)
  chmod 755 "$DOCKER_CI_DIR"
  mkdir -p "$DOCKER_CI_DIR/data" "$DOCKER_CI_DIR/exec"
  export DOCKER_HOST="unix://$DOCKER_CI_DIR/docker.sock"
  setsid dockerd \
    --data-root="$DOCKER_CI_DIR/data" --exec-root="$DOCKER_CI_DIR/exec" \
    --pidfile="$DOCKER_CI_DIR/dockerd.pid" -H "$DOCKER_HOST" \
    --storage-driver=overlay2 \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
    --log-level=warn >"$DOCKER_CI_DIR/dockerd.log" 2>&1 </dev/null &
  local _
  for _ in $(seq 1 300); do # normally ready in well under a second
    if [ -z "$DOCKERD_PID" ] && [ -s "$DOCKER_CI_DIR/dockerd.pid" ]; then
      # setsid may fork, so $! is not always dockerd: its own pidfile is the authority.
      DOCKERD_PID=$(cat "$DOCKER_CI_DIR/dockerd.pid")
    fi
    if docker version >/dev/null 2>&1; then
      break
    fi
    if [ -n "$DOCKERD_PID" ] && ! kill -0 "$DOCKERD_PID" 2>/dev/null; then
      echo "dockerd exited during startup:" >&2
      cat "$DOCKER_CI_DIR/dockerd.log" >&2
      return 1
    fi
    sleep 0.1
  done
  if ! docker version >/dev/null 2>&1; then
    echo "dockerd did not answer on $DOCKER_HOST within 30 s:" >&2
    cat "$DOCKER_CI_DIR/dockerd.log" >&2
    return 1
  fi
  for _ in $(seq 1 50); do # the socket can answer a moment before the pidfile is written
    [ -s "$DOCKER_CI_DIR/dockerd.pid" ] && break
    sleep 0.1
  done
  [ -n "$DOCKERD_PID" ] || DOCKERD_PID=$(cat "$DOCKER_CI_DIR/dockerd.pid" 2>/dev/null || true)
  if [ -z "$DOCKERD_PID" ] || ! grep -q dockerd "/proc/$DOCKERD_PID/cmdline" 2>/dev/null; then
    echo "dockerd answers but its pidfile does not name it; refusing to continue" >&2
    return 1
  fi
  CONTAINERD_PID=$(cat "$DOCKER_CI_DIR/exec/containerd/containerd.pid" 2>/dev/null || true)
  docker version --format 'dockerd {{.Server.Version}} (API {{.Server.APIVersion}}) at '"$DOCKER_HOST"
}

docker_ci_busybox_tar() { # $1: a scratch dir; writes a busybox-static root filesystem as a tar to stdout
  local dir=$1 rootfs="$1/rootfs" applet
  mkdir -p "$rootfs"
  (cd "$dir" && apt-get download -qq -o APT::Sandbox::User=root busybox-static) || return 1
  dpkg-deb -x "$dir"/busybox-static_*.deb "$rootfs"
  mkdir -p "$rootfs"/{etc,root,tmp,proc,sys,dev,usr/bin}
  chmod 1777 "$rootfs/tmp"
  for applet in $("$rootfs/bin/busybox" --list); do
    [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$rootfs/etc/passwd"
  echo 'root:x:0:' >"$rootfs/etc/group"
  tar -C "$rootfs" -c .
  rm -rf "$rootfs" "$dir"/busybox-static_*.deb
}

docker_ci_build_base_image() {
  docker_ci_busybox_tar "$DOCKER_CI_DIR" | docker import -c 'CMD ["/bin/sh"]' - "$DOCKER_CI_IMAGE" >/dev/null
  echo "built $DOCKER_CI_IMAGE from busybox-static"
}

_docker_ci_stop_pid() { # TERM, wait up to $2 seconds, then KILL; only the given PID
  local pid=$1 wait_tenths=$(($2 * 10)) _
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$wait_tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

docker_ci_stop() {
  [ -n "$DOCKER_CI_DIR" ] || return 0
  _docker_ci_stop_pid "$DOCKERD_PID" 20 # dockerd takes containerd and the containers down with it
  if [ -n "$CONTAINERD_PID" ] && grep -q containerd "/proc/$CONTAINERD_PID/cmdline" 2>/dev/null; then
    _docker_ci_stop_pid "$CONTAINERD_PID" 5 # only left if dockerd had to be killed
  fi
  grep -o " $DOCKER_CI_DIR[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$DOCKER_CI_DIR"
  DOCKER_CI_DIR=""
}
