#!/bin/bash
# `make check-vm`: runs the cgroup v2 group (tests/vm/guest-v2.sh) in ONE
# guest boot and passes its PASS/FAIL lines through; a guest that does not
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
CG2_TIMEOUT=${CG2_TIMEOUT:-240} "$TOP/tests/vm/run-in-vm.sh" bash "$TOP/tests/vm/guest-v2.sh" >"$out" 2>&1
rc=$?
cat "$out"
if ! grep -q '^vm-v2: done' "$out"; then
	echo "FAIL vm-v2: guest run did not finish (exit $rc)"
	rm -f "$out"; exit 1
fi
fails=$(grep -c '^FAIL ' "$out")
rm -f "$out"
[ "$fails" = 0 ]
