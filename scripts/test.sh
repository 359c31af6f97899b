#!/usr/bin/env sh
# The whole test suite, inside a network namespace with only loopback up, so nothing a test starts
# (the real Claude Code above all) can reach past this machine. Root uses `unshare -n`; others get a
# user namespace (`unshare -rn`) where the kernel allows it.
set -eu
cd "$(dirname "$0")/.."
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
