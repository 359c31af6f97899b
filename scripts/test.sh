#!/usr/bin/env sh
# The whole test suite, inside a network namespace with only loopback up, so nothing a test starts
# (the real Claude Code above all) can reach past this machine. Root uses `unshare -n`; others get a
# user namespace (`unshare -rn`) where the kernel allows it.
set -eu
cd "$(dirname "$0")/.."
# A config is first loaded in a child with a time limit (10 s by default); on a loaded machine running
# many tests at once that child can be slow to start, so the suite allows a minute unless a test sets
# its own limit (the tests of a config that hangs do).
export FLUME_CONFIG_TIMEOUT_MS="${FLUME_CONFIG_TIMEOUT_MS:-60000}"
# Likewise status waits a second for a config's probe before it reports the repository as loading; a
# test that reads status just after a config changed would see that on a loaded machine. The suite
# waits the whole limit unless a test sets its own (the test of a config that hangs sets one second).
export FLUME_STATUS_CONFIG_WAIT_MS="${FLUME_STATUS_CONFIG_WAIT_MS:-$FLUME_CONFIG_TIMEOUT_MS}"
# Nothing a test starts speaks TLS (the scripted APIs are plain HTTP on loopback, and nothing past it is
# reachable), and a user's shell does not set NODE_EXTRA_CA_CERTS: where the machine sets it, Node 20
# parses that whole bundle at every start (about 37 ms of CPU, thousands of starts in a run). The suite
# runs without it; FLUME_TEST_KEEP_CA=1 keeps it (to measure what it costs).
[ "${FLUME_TEST_KEEP_CA:-}" = 1 ] || unset NODE_EXTRA_CA_CERTS
if [ "${FLUME_IN_NETNS:-}" = 1 ]; then
  ip link set lo up
  exec node node_modules/vitest/vitest.mjs run "$@"
fi
for flags in -n -rn; do
  if unshare $flags true 2>/dev/null; then
    FLUME_IN_NETNS=1 exec unshare $flags sh "$0" "$@"
  fi
done
echo "flume's tests need a network namespace (unshare -n as root, or unshare -rn); none can be made here." >&2
exit 1
