# shellcheck shell=bash
# Sourced by .ci/run (and by hand on a dev machine): the remote ends of the docker provider's tests.
#
# docker_remote_start makes, under one mktemp dir,
#   - a second private dockerd listening only on tcp://127.0.0.1:<free port> with --tlsverify,
#     its CA, server and client certificates made here by openssl, plus a "rogue" client
#     certificate from another CA for the wrong-certificate tests;
#   - an sshd on 127.0.0.1:<free port> that accepts one generated key, and whose sessions get a
#     DOCKER_HOST (with TLS) that reaches that daemon, so `ssh ... docker system dial-stdio` works;
#   - a marked block at the top of the ssh client's ~/.ssh/config (the passwd home, which is
#     what ssh reads, not $HOME) with two host aliases: one with the accepted key, one with a
#     key the server refuses. Nothing else in that file is touched.
# It exports RIG_TEST_DOCKER_TLS_HOST, RIG_TEST_DOCKER_CERT_PATH, RIG_TEST_DOCKER_ROGUE_CERT_PATH,
# RIG_TEST_DOCKER_SSH_HOST and RIG_TEST_DOCKER_SSH_BADKEY_HOST. docker_remote_stop stops both
# daemons by PID, removes the ssh config block and deletes the dir. The daemon gets the same
# network-inert flags as .ci/docker.sh: host networking is never changed.

DOCKER_REMOTE_DIR=""
DOCKER_REMOTE_DOCKERD_PID=""
DOCKER_REMOTE_CONTAINERD_PID=""
DOCKER_REMOTE_SSHD_PID=""
DOCKER_REMOTE_SSH_CONFIG=""
DOCKER_REMOTE_SSH_CONFIG_NEW=""
DOCKER_REMOTE_SSH_DIR_NEW=""
DOCKER_REMOTE_IMAGE="${RIG_TEST_DOCKER_IMAGE:-rig/base:busybox}"
# The busybox root filesystem comes from docker.sh's docker_ci_busybox_tar.
if ! declare -F docker_ci_busybox_tar >/dev/null; then
  # shellcheck source=.ci/docker.sh
  source "$(dirname "${BASH_SOURCE[0]}")/docker.sh"
fi

_docker_remote_install() { # CI machines start without these; apt is reachable there
  local missing=()
  command -v openssl >/dev/null || missing+=(openssl)
  command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || missing+=(openssh-client)
  [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

_docker_remote_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

_docker_remote_certs() { # $1: dir; a CA, a server cert for 127.0.0.1, a client cert, a rogue client
  local d=$1
  mkdir -p "$d/tls" "$d/client" "$d/rogue"
  (
    cd "$d/tls" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rig test CA" \
      -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server-key.pem -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
      -extfile server.ext -out server-cert.pem 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl req -newkey rsa:2048 -nodes -subj "/CN=rig client" -keyout client-key.pem -out client.csr 2>/dev/null
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 \
      -extfile client.ext -out client-cert.pem 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rogue CA" \
      -keyout rogue-ca-key.pem -out rogue-ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=rogue client" -keyout rogue-key.pem -out rogue.csr 2>/dev/null
    openssl x509 -req -in rogue.csr -CA rogue-ca.pem -CAkey rogue-ca-key.pem -CAcreateserial -days 2 \
      -extfile client.ext -out rogue-cert.pem 2>/dev/null
  ) || return 1
  cp "$d/tls/ca.pem" "$d/client/ca.pem"
  cp "$d/tls/client-cert.pem" "$d/client/cert.pem"
  cp "$d/tls/client-key.pem" "$d/client/key.pem"
  cp "$d/tls/rogue-ca.pem" "$d/rogue/ca.pem"
  cp "$d/tls/rogue-cert.pem" "$d/rogue/cert.pem"
  cp "$d/tls/rogue-key.pem" "$d/rogue/key.pem"
  chmod 600 "$d"/tls/*key.pem "$d/client/key.pem" "$d/rogue/key.pem"
}

_docker_remote_wait_pidfile() { # $1: pidfile, $2: expected command name; prints the pid
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

_docker_remote_dockerd() {
  local d=$DOCKER_REMOTE_DIR port _
  port=$(_docker_remote_free_port)
  RIG_TEST_DOCKER_TLS_HOST="tcp://127.0.0.1:$port"
  mkdir -p "$d/data" "$d/exec"
  setsid dockerd \
    --data-root="$d/data" --exec-root="$d/exec" --pidfile="$d/dockerd.pid" \
    -H "$RIG_TEST_DOCKER_TLS_HOST" --tlsverify \
    --tlscacert="$d/tls/ca.pem" --tlscert="$d/tls/server-cert.pem" --tlskey="$d/tls/server-key.pem" \
    --storage-driver=overlay2 \
    --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
    --log-level=warn >"$d/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 1 300); do
    _docker_remote_cli version >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! DOCKER_REMOTE_DOCKERD_PID=$(_docker_remote_wait_pidfile "$d/dockerd.pid" dockerd) ||
    ! _docker_remote_cli version >/dev/null 2>&1; then
    echo "the TLS dockerd did not answer on $RIG_TEST_DOCKER_TLS_HOST:" >&2
    cat "$d/dockerd.log" >&2
    return 1
  fi
  DOCKER_REMOTE_CONTAINERD_PID=$(cat "$d/exec/containerd/containerd.pid" 2>/dev/null || true)
}

_docker_remote_cli() { # the docker CLI on the TLS daemon, with the client certificate
  DOCKER_HOST="$RIG_TEST_DOCKER_TLS_HOST" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$DOCKER_REMOTE_DIR/client" \
    docker "$@"
}

_docker_remote_image() { # the first daemon's copy when it has one (same image id), else from busybox-static
  if [ -n "${DOCKER_HOST:-}" ] && docker image inspect "$DOCKER_REMOTE_IMAGE" >/dev/null 2>&1; then
    docker save "$DOCKER_REMOTE_IMAGE" | _docker_remote_cli load -q >/dev/null && return 0
  fi
  docker_ci_busybox_tar "$DOCKER_REMOTE_DIR" | _docker_remote_cli import -c 'CMD ["/bin/sh"]' - "$DOCKER_REMOTE_IMAGE" >/dev/null
}

_docker_remote_sshd() {
  local d=$DOCKER_REMOTE_DIR port user home alias key
  port=$(_docker_remote_free_port)
  user=$(id -un)
  mkdir -p "$d/ssh" /run/sshd
  ssh-keygen -q -t ed25519 -N "" -C "rig test host" -f "$d/ssh/host_key"
  ssh-keygen -q -t ed25519 -N "" -C "rig test client" -f "$d/ssh/id_ed25519"
  ssh-keygen -q -t ed25519 -N "" -C "rig refused client" -f "$d/ssh/id_refused"
  cp "$d/ssh/id_ed25519.pub" "$d/ssh/authorized_keys"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$d/ssh/host_key.pub")" >"$d/ssh/known_hosts"
  cat >"$d/ssh/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $d/ssh/host_key
PidFile $d/sshd.pid
AuthorizedKeysFile $d/ssh/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding no
AllowStreamLocalForwarding no
X11Forwarding no
SetEnv DOCKER_HOST=$RIG_TEST_DOCKER_TLS_HOST DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$d/client
EOF
  setsid /usr/sbin/sshd -D -f "$d/ssh/sshd_config" -E "$d/sshd.log" </dev/null &
  if ! DOCKER_REMOTE_SSHD_PID=$(_docker_remote_wait_pidfile "$d/sshd.pid" sshd); then
    echo "sshd did not start:" >&2
    cat "$d/sshd.log" >&2
    return 1
  fi

  home=$(getent passwd "$user" | cut -d: -f6)
  DOCKER_REMOTE_SSH_CONFIG="$home/.ssh/config"
  [ -e "$DOCKER_REMOTE_SSH_CONFIG" ] || DOCKER_REMOTE_SSH_CONFIG_NEW=1
  [ -e "$home/.ssh" ] || DOCKER_REMOTE_SSH_DIR_NEW=1
  alias="rig-docker-remote-${d##*.}"
  mkdir -p "$home/.ssh"
  chmod 700 "$home/.ssh"
  # At the top: ssh takes the first value it reads for each option, so a later "Host *" cannot override ours.
  {
    echo "# >>> rig docker-remote $d >>>"
    for key in id_ed25519 id_refused; do
      [ "$key" = id_ed25519 ] && echo "Host $alias" || echo "Host $alias-refused"
      echo "  HostName 127.0.0.1"
      echo "  Port $port"
      echo "  User $user"
      echo "  IdentityFile $d/ssh/$key"
      echo "  IdentitiesOnly yes"
      echo "  IdentityAgent none"
      echo "  UserKnownHostsFile $d/ssh/known_hosts"
      echo "  StrictHostKeyChecking yes"
    done
    echo "# <<< rig docker-remote $d <<<"
    cat "$DOCKER_REMOTE_SSH_CONFIG" 2>/dev/null || true
  } >"$d/ssh/client_config.new"
  cat "$d/ssh/client_config.new" >"$DOCKER_REMOTE_SSH_CONFIG" # in place: the file keeps its owner and mode
  [ -z "$DOCKER_REMOTE_SSH_CONFIG_NEW" ] || chmod 600 "$DOCKER_REMOTE_SSH_CONFIG"
  RIG_TEST_DOCKER_SSH_HOST="ssh://$alias"
  RIG_TEST_DOCKER_SSH_BADKEY_HOST="ssh://$alias-refused"
  if ! ssh -o BatchMode=yes "$alias" docker version --format '{{.Server.Version}}' >/dev/null 2>"$d/ssh.err"; then
    echo "docker over ssh does not work:" >&2
    cat "$d/ssh.err" "$d/sshd.log" >&2
    return 1
  fi
}

docker_remote_start() {
  _docker_remote_install || return 1
  DOCKER_REMOTE_DIR=$(mktemp -d /tmp/rig-ci-remote.XXXXXX)
  chmod 755 "$DOCKER_REMOTE_DIR"
  _docker_remote_certs "$DOCKER_REMOTE_DIR" || return 1
  _docker_remote_dockerd || return 1
  _docker_remote_image || return 1
  _docker_remote_sshd || return 1
  export RIG_TEST_DOCKER_TLS_HOST RIG_TEST_DOCKER_SSH_HOST RIG_TEST_DOCKER_SSH_BADKEY_HOST
  export RIG_TEST_DOCKER_CERT_PATH="$DOCKER_REMOTE_DIR/client"
  export RIG_TEST_DOCKER_ROGUE_CERT_PATH="$DOCKER_REMOTE_DIR/rogue"
  _docker_remote_cli version --format \
    'dockerd {{.Server.Version}} (API {{.Server.APIVersion}}) at '"$RIG_TEST_DOCKER_TLS_HOST"' (TLS), and over '"$RIG_TEST_DOCKER_SSH_HOST"
}

_docker_remote_stop_pid() { # TERM, wait up to $3 seconds, then KILL; only that PID, and only if it is still $2
  local pid=$1 name=$2 wait_tenths=$(($3 * 10)) _
  [ -n "$pid" ] && grep -q "$name" "/proc/$pid/cmdline" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$wait_tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

docker_remote_stop() {
  local d=$DOCKER_REMOTE_DIR
  [ -n "$d" ] || return 0
  if [ -n "$DOCKER_REMOTE_SSH_CONFIG" ] && [ -f "$DOCKER_REMOTE_SSH_CONFIG" ]; then
    sed -i "\\|^# >>> rig docker-remote $d >>>\$|,\\|^# <<< rig docker-remote $d <<<\$|d" "$DOCKER_REMOTE_SSH_CONFIG"
    # A file this script created goes again once nothing else was added to it.
    [ -n "$DOCKER_REMOTE_SSH_CONFIG_NEW" ] && [ ! -s "$DOCKER_REMOTE_SSH_CONFIG" ] && rm -f "$DOCKER_REMOTE_SSH_CONFIG" || true
    [ -n "$DOCKER_REMOTE_SSH_DIR_NEW" ] && rmdir "$(dirname "$DOCKER_REMOTE_SSH_CONFIG")" 2>/dev/null || true
  fi
  _docker_remote_stop_pid "$DOCKER_REMOTE_SSHD_PID" sshd 5 # its sessions end with it
  _docker_remote_stop_pid "$DOCKER_REMOTE_DOCKERD_PID" dockerd 20
  _docker_remote_stop_pid "$DOCKER_REMOTE_CONTAINERD_PID" containerd 5 # only left if dockerd had to be killed
  grep -o " $d[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$d"
  DOCKER_REMOTE_DIR=""
  unset RIG_TEST_DOCKER_TLS_HOST RIG_TEST_DOCKER_CERT_PATH RIG_TEST_DOCKER_ROGUE_CERT_PATH
  unset RIG_TEST_DOCKER_SSH_HOST RIG_TEST_DOCKER_SSH_BADKEY_HOST
}
