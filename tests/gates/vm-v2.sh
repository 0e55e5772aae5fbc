#!/bin/bash
# The cgroup v2 group for `make check`: this host is hybrid (v1), so the v2
# backend is tested in a QEMU guest with a pure v2 hierarchy, the v2 group
# in one boot and the core suites in another (tests/vm/check-v2.sh), each
# test reported as its own PASS/FAIL line.
# The guest covers root and a rootless delegated user itself, so only the
# root pass boots it; the unprivileged pass has nothing to add here.
[ "$(id -u)" = 0 ] || exit 0
# make check-asan (CLOISTER_BUILD=build-asan) reruns the suites that drive
# the binary; this one does not depend on which binary runs it.
[ "${CLOISTER_BUILD:-build}" = build ] || exit 0
# tests/run.sh (or .ci/run) boots the guest at its start, beside the host
# suites (CLOISTER_VM_BG): this group then collects its lines.
[ -n "${CLOISTER_VM_BG:-}" ] && exec "$(dirname "$0")/../vm/background.sh" wait "$CLOISTER_VM_BG"
exec "$(dirname "$0")/../vm/check-v2.sh"
