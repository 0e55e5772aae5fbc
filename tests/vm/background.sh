#!/bin/bash
# The QEMU guest beside the host suites: TCG runs the guest in one host
# process while the host suites mostly sleep on timers and I/O, so the two
# boots of tests/vm/check-v2.sh (about 12 minutes quiet) overlap the rest
# of the run instead of adding to it.
#   tests/vm/background.sh start FILE   boot now, results into FILE.out/.rc
#   tests/vm/background.sh wait FILE    wait for them, print them, exit rc
# Needs the build (build/cloister, build/tests) in place before `start`:
# the guest runs it over 9p as it is.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cmd=${1:-}; f=${2:-}
[ -n "$f" ] || { echo "usage: $0 start|wait FILE" >&2; exit 2; }
case $cmd in
start)
	rm -f "$f.out" "$f.rc" "$f.time"
	# setsid: its own group, which a test's cleanup (kill -- -PGID) never
	# reaches; .rc is written last, so wait sees a whole .out.
	# .time: the guest's wall seconds, for .ci/run's table.
	setsid bash -c 't=$SECONDS; "$1/tests/vm/check-v2.sh" >"$2.out" 2>&1; r=$?; echo $((SECONDS - t)) >"$2.time"
		echo $r >"$2.rc.tmp"; mv "$2.rc.tmp" "$2.rc"' \
		_ "$TOP" "$f" </dev/null >/dev/null 2>&1 &
	echo $! >"$f.pid"
	;;
wait)
	[ -e "$f.pid" ] || { echo "FAIL vm-v2: no guest was started in the background ($f)"; exit 1; }
	# check-v2.sh bounds each boot (CG2_V2_TIMEOUT + CG2_CORE_TIMEOUT);
	# this bound is theirs plus a margin, for a guest that wedges the host.
	limit=$(( ${CG2_V2_TIMEOUT:-900} + ${CG2_CORE_TIMEOUT:-3000} + 300 )) t=$SECONDS
	while [ ! -e "$f.rc" ]; do
		if [ $((SECONDS - t)) -gt "$limit" ]; then
			kill -TERM -- -"$(cat "$f.pid")" 2>/dev/null
			echo "FAIL vm-v2: the background guest did not end within $limit s"
			exit 1
		fi
		sleep 2
	done
	cat "$f.out"
	echo "vm-v2: the background guest ran beside the host suites; waited $((SECONDS - t)) s for it here"
	rc=$(cat "$f.rc"); rm -f "$f.out" "$f.rc" "$f.pid"
	exit "$rc"
	;;
stop)
	[ -e "$f.pid" ] && kill -TERM -- -"$(cat "$f.pid")" 2>/dev/null
	rm -f "$f.out" "$f.rc" "$f.pid"
	;;
*) echo "usage: $0 start|wait|stop FILE" >&2; exit 2 ;;
esac
