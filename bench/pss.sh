#!/bin/bash
# P4 of `make bench`: resident cost (Pss, KiB) of a sandbox's own processes
# while its command sleeps: every process of the launched tree except `sleep`.
#   pss.sh SAMPLES GROUP ID LABEL COMMAND... (COMMAND runs `sleep N` inside)
# Prints one rows.tsv line for bench/report.py. Needs root: the sandbox's
# init is non-dumpable, so its smaps_rollup is closed to its own user.
set -u
n=$1 group=$2 id=$3 label=$4; shift 4

descendants() {  # pid: the pid and all its descendants
	local p=$1 c
	echo "$p"
	for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do descendants "$c"; done
}
pss_of() {
	awk '/^Pss:/ {print $2; exit}' "/proc/$1/smaps_rollup" 2>/dev/null
}

samples=""
for _ in $(seq "$n"); do
	"$@" >/dev/null 2>&1 &
	top=$!
	tree="" have_sleep=0
	for _ in $(seq 200); do   # up to ~5 s for the command to start
		tree=$(descendants "$top")
		for p in $tree; do [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && have_sleep=1; done
		[ $have_sleep = 1 ] && break
		sleep 0.025
	done
	total=0
	if [ $have_sleep = 1 ]; then
		for p in $tree; do
			[ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && continue
			v=$(pss_of "$p"); total=$((total + ${v:-0}))
		done
	fi
	kill -KILL $tree 2>/dev/null
	wait "$top" 2>/dev/null
	if [ $have_sleep = 0 ]; then
		printf '%s\t%s\t%s\troot\tvalue:KiB\tna\t%s\n' "$group" "$id" "$label" "the command never started"
		exit 0
	fi
	samples="$samples $total"
done
printf '%s\t%s\t%s\troot\tvalue:KiB\tok\t%s\n' "$group" "$id" "$label" "${samples# }"
