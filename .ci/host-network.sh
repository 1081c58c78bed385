# shellcheck shell=bash
# Sourced by .ci/run and .ci/swarm.sh: what the host's network namespace looks like, to prove the tests left it alone.
#
# host_network_state prints links, addresses (lifetimes dropped: they count down on their own),
# routes, IPv4 forwarding and the iptables filter and nat rules. host_network_check FILE compares
# the state now with one saved in FILE and prints the difference loudly; it returns 1 if they differ.

host_network_state() {
  echo "## ip -o link"
  ip -o link show
  echo "## ip -o addr"
  ip -o addr show | sed -E 's/ *(valid|preferred)_lft [^ ]+//g'
  echo "## ip route"
  ip route show table all 2>/dev/null || ip route show
  echo "## ip -6 route"
  ip -6 route show 2>/dev/null || true
  echo "## net.ipv4.ip_forward"
  cat /proc/sys/net/ipv4/ip_forward
  if command -v iptables >/dev/null 2>&1; then
    echo "## iptables"
    iptables -S 2>/dev/null || true
    iptables -t nat -S 2>/dev/null || true
  fi
}

host_network_check() { # $1: a file written earlier by host_network_state
  local now
  now=$(mktemp /tmp/rig-ci-hostnet.XXXXXX)
  host_network_state >"$now"
  if ! diff -u "$1" "$now" >"$now.diff"; then
    {
      echo "!!! the host's network namespace changed during this run (before: -, after: +):"
      cat "$now.diff"
    } >&2
    rm -f "$now" "$now.diff"
    return 1
  fi
  rm -f "$now" "$now.diff"
  return 0
}
