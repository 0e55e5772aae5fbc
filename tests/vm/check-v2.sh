#!/bin/bash
# `make check-vm`: runs the cgroup v2 group (tests/vm/guest-v2.sh) and the
# core suites (tests/vm/guest-core.sh) in ONE guest boot and passes their
# PASS/FAIL lines through; a guest that does not
# come up, or stops early, is reported as a FAIL line too.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
need=""
ls /boot/vmlinuz-* >/dev/null 2>&1 || need="$need linux-image-amd64"
command -v qemu-system-x86_64 >/dev/null || need="$need qemu-system-x86"
[ -x /bin/busybox ] || need="$need busybox-static"
command -v strace >/dev/null || need="$need strace"
if [ -n "$need" ]; then
	echo "FAIL vm-v2: guest: missing$need (run: tests/deps.sh install --vm)"
	exit 1
fi
out=$(mktemp /tmp/cloister-vm.XXXXXX)
# One boot: the cgroup v2 group, then the core isolation suites on the
# guest's Debian kernel.
CG2_TIMEOUT=${CG2_TIMEOUT:-2400} CG2_MEM=${CG2_MEM:-2048} "$TOP/tests/vm/run-in-vm.sh" \
	bash -c '"$0" ; "$1"' "$TOP/tests/vm/guest-v2.sh" "$TOP/tests/vm/guest-core.sh" >"$out" 2>&1
rc=$?
cat "$out"
for group in vm-v2 vm-core; do
	if ! grep -q "^$group: done" "$out"; then
		echo "FAIL $group: guest run did not finish (exit $rc)"
		rm -f "$out"; exit 1
	fi
done
fails=$(grep -c '^FAIL ' "$out")
rm -f "$out"
[ "$fails" = 0 ]
