#!/bin/bash
# `make check-vm`: boots the pure cgroup v2 guest twice, once for the v2
# group (tests/vm/guest-v2.sh) and once for the core suites on the guest's
# Debian kernel (tests/vm/guest-core.sh), and passes their PASS/FAIL lines
# through. Each boot has its own deadline, so a group that runs out of
# time is reported by name and cannot take the other down with it; a guest
# that does not come up, or stops early, is a FAIL line too.
# Deadlines (TCG, no KVM): quiet, with 2 vCPUs, the v2 group takes about
# 1 min and the core suites about 11 min; CI also runs this with both host
# CPUs busy beside it, which has made TCG more than 3 times slower. Inside
# the guest, tests/lib.sh still stops each test after its own 300 s.
#   CG2_V2_TIMEOUT (900), CG2_CORE_TIMEOUT (3000): seconds per boot.
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
trap 'rm -f "$out"' EXIT
failed=0
boot() {  # group, deadline (s), guest script
	local group=$1 t=$SECONDS rc
	# 2 vCPUs: TCG runs one host thread per vCPU, and a sandbox launch
	# (supervisor, init, command) has more than one thing running at once.
	CG2_TIMEOUT=$2 CG2_MEM=${CG2_MEM:-2048} CG2_SMP=${CG2_SMP:-2} \
		"$TOP/tests/vm/run-in-vm.sh" "$3" >"$out" 2>&1
	rc=$?
	cat "$out"
	echo "$group: the guest boot took $((SECONDS - t)) s (deadline $2 s)"
	if ! grep -q "^$group: done" "$out"; then
		echo "FAIL $group: guest run did not finish (exit $rc$([ $rc = 124 ] && echo ": out of its $2 s"))"
		failed=1
	fi
	grep -q '^FAIL ' "$out" && failed=1
	return 0
}
boot vm-v2 "${CG2_V2_TIMEOUT:-900}" "$TOP/tests/vm/guest-v2.sh"
boot vm-core "${CG2_CORE_TIMEOUT:-3000}" "$TOP/tests/vm/guest-core.sh"
exit $failed
