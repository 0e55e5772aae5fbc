#!/bin/bash
# `make check-valgrind`: runs each unit test binary under valgrind's
# memcheck. Fails on any invalid access or uninitialised use, and on any
# leak (definite, indirect or possible: a unit test frees what it makes,
# so whatever is left is lost). Prints PASS/FAIL per binary.
#   tests/lint/valgrind.sh build/tests/test_*
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
command -v valgrind >/dev/null || { echo "FAIL valgrind: not installed (tests/deps.sh installs it)"; exit 1; }
[ $# -gt 0 ] || set -- build/tests/test_*
rc=0
# The seccomp API level the kernel has, read outside valgrind (which does
# not implement seccomp(2); see tests/unit/test_seccomp.c).
for t in "$@"; do
	case $t in */test_seccomp) CL_TEST_SECCOMP_API=$("$t" --api-level) && export CL_TEST_SECCOMP_API ;; esac
done
for t in "$@"; do
	[ -x "$t" ] || { echo "FAIL valgrind: $t is not built"; rc=1; continue; }
	log=$(mktemp /tmp/cloister-vg.XXXXXX)
	# --error-exitcode: errors and (with the leak kinds below) leaks make
	# the run exit 99; the test's own status is checked as well.
	valgrind -q --error-exitcode=99 --leak-check=full \
		--show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible \
		--track-origins=yes "$t" >"$log" 2>&1
	r=$?
	if [ $r = 0 ] && ! grep -q '^==[0-9]*==' "$log"; then
		echo "PASS valgrind: $(basename "$t")"
	else
		echo "FAIL valgrind: $(basename "$t") exited $r: $(grep -m3 -E '^==[0-9]+== [^ =]|^FAIL' "$log" | tr '\n' ' ')"
		grep -E '^==[0-9]+==' "$log" | head -40
		rc=1
	fi
	rm -f "$log"
done
exit $rc
