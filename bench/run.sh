#!/bin/bash
# `make bench`: cloister side by side with the raw floor, Debian's bwrap and
# /bin/true, in one run. Writes build/bench/results/latest.{md,json,svg}
# (--quick: quick.{md,json,svg}, fewer rounds and runs); nothing tracked.
#   bench/run.sh [--quick]
# Rows whose feature is not built (the probe run fails) print "n/a" with the
# probe's own error; nothing is ever estimated. As root, unprivileged rows run
# as CLOISTER_TEST_USER (default cloister-test) on a world-readable copy under
# /tmp, like tests/run.sh; as any other user, root-only rows are n/a.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
QUICK=0
for a in "$@"; do
	case $a in
	--quick) QUICK=1 ;;
	*) echo "usage: bench/run.sh [--quick]" >&2; exit 2 ;;
	esac
done
if [ $QUICK = 1 ]; then
	ROUNDS=2 RUNS=10 WARM=2 PAR_N=4 PAR_RUNS=1 PSS_N=1 GETPPID_N=200000
else
	ROUNDS=6 RUNS=40 WARM=3 PAR_N=25 PAR_RUNS=1 PSS_N=5 GETPPID_N=2000000
fi
PAR_P=8
HF_X=()
TEST_USER=${CLOISTER_TEST_USER:-cloister-test}
for t in hyperfine gnuplot python3 bwrap; do
	command -v $t >/dev/null || { echo "bench: $t missing; run ./tests/deps.sh install --bench" >&2; exit 1; }
done
# Built here in a source tree; a copy of build/ without one (the test
# user's pass of tests/run.sh) must already hold them.
PROGS="build/bench/floor build/bench/par build/bench/getppid build/bench/blast"
if [ -f Makefile ]; then
	make -s all $PROGS || exit 1
fi
for f in build/cloister $PROGS; do
	[ -x "$f" ] || { echo "bench: $TOP/$f missing: build it in the source tree (make check-build)" >&2; exit 1; }
done

# A world-readable copy so the unprivileged user runs the very same bits.
WORK=$(mktemp -d /tmp/cloister-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
BIN=$WORK/bin OUT=$WORK/out
mkdir -p "$BIN" "$OUT" "$WORK/req" "$WORK/res"
cp build/cloister build/bench/floor build/bench/par build/bench/getppid build/bench/blast "$BIN/"
cp bench/pss.sh bench/relay.sh "$BIN/"
chmod -R a+rX "$WORK"; chmod 755 "$WORK"; chmod 1777 "$OUT" "$WORK/res"
ROWS=$OUT/rows.tsv CMPS=$OUT/compare.tsv
: >"$ROWS"; : >"$CMPS"
CL=$BIN/cloister

IS_ROOT=0; [ "$(id -u)" = 0 ] && IS_ROOT=1
HAVE_USER=0
if [ $IS_ROOT = 1 ]; then
	# The same helper tests/run.sh and .ci/run use; said once.
	if made=$("$TOP/tests/test_user.sh" "$TEST_USER" 2>"$OUT/user.err"); then
		HAVE_USER=1
		echo "bench: unprivileged rows run as ${TEST_USER}${made:+ ($made)}"
	else
		echo "bench: unprivileged rows are n/a: $(head -1 "$OUT/user.err")"
	fi
else
	echo "bench: not root: the root rows (P2 root, P4, docker) are left out, reported n/a \"needs root\""
fi
# Deadlines. A probe (one run) has CMD_S seconds; a hyperfine call has
# CMD_S per run of each of its commands (warm-ups included) plus GROUP_S;
# a relay sample has SAMPLE_S. A row past its deadline is reported
# "timeout" with its command and what it printed, and the bench goes on.
CMD_S=${CLOISTER_BENCH_CMD_S:-30}
GROUP_S=${CLOISTER_BENCH_GROUP_S:-60}
TIMEOUTS=0
# CLOISTER_BENCH_ONLY=G1,G2 runs those groups only (tests/integration/
# bench_harness.sh); CLOISTER_BENCH_PLANT="id|label|command" adds a group
# PLANT with that one row.
want() { [ -z "${CLOISTER_BENCH_ONLY:-}" ] || [[ ",$CLOISTER_BENCH_ONLY," == *",$1,"* ]]; }
as_who() {  # who cmd...: run as "user" (unprivileged) or "root"
	local who=$1; shift
	if [ "$who" = user ] && [ $IS_ROOT = 1 ]; then
		runuser -u "$TEST_USER" -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			${XDG_CACHE_HOME:+XDG_CACHE_HOME=$XDG_CACHE_HOME} "$@"
	else
		"$@"
	fi
}
# Why WHO cannot run here, or nothing.
who_missing() {
	case $1 in
	root) [ $IS_ROOT = 1 ] || echo "needs root" ;;
	user) [ $IS_ROOT = 0 ] || [ $HAVE_USER = 1 ] || echo "no user $TEST_USER" ;;
	esac
}
# Runs COMMAND once as WHO; prints why it failed (its first error line), or
# nothing when it worked. This is how unbuilt features become "n/a".
probe() {  # who command-line
	local who=$1 cmd=$2 err rc
	err=$(as_who "$who" timeout -k 5 "$CMD_S" $cmd 2>&1 >/dev/null); rc=$?
	[ $rc = 0 ] && return 0
	[ $rc = 124 ] || [ $rc = 137 ] && err="timeout after ${CMD_S}s (probe): $err"
	err=$(printf '%s\n' "$err" | grep -m1 . | tr '\t' ' ' | cut -c1-140)
	echo "exit $rc: ${err:-no message}"
}
compare() {  # label idA idB kind(ratio|rate|diff) target
	want "${1%% *}" || return 0
	printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$CMPS"
}

# group NAME WHO KIND ENTRY... ; ENTRY is "id|label|command line". The
# command line is run by hyperfine without a shell (-N), so it is split on
# spaces: no quoting. Every entry that probes fine is timed in the same
# hyperfine call, ROUNDS times, so rows of a group are measured side by side.
# KIND is lat (ms per launch) or batch:N (ms per batch of N launches).
# Extra hyperfine options go in the array HF_X.
group() {
	local g=$1 who=$2 kind=$3; shift 3
	local -a args=()
	local e id label cmd why miss runs=$RUNS warm=$WARM dl rc
	local -a okrows=() okcmds=()
	local k
	want "$g" || return 0
	[ "${kind%%:*}" = batch ] && runs=$PAR_RUNS warm=1
	miss=$(who_missing "$who")
	for e in "$@"; do
		IFS='|' read -r id label cmd <<<"$e"
		why=$miss
		[ -z "$why" ] && why=$(probe "$who" "$cmd")
		if [ -n "${why##*timeout after*}" ]; then
			printf '%s\t%s.%s\t%s\t%s\t%s\tna\t%s\n' "$g" "$id" "$who" "$label" "$who" "$kind" "$why" >>"$ROWS"
			echo "  n/a  [$who] $label: $why"
			continue
		elif [ -n "$why" ]; then
			# The probe itself ran past CMD_S: the row is a timeout.
			TIMEOUTS=$((TIMEOUTS + 1))
			printf '%s\t%s.%s\t%s\t%s\t%s\ttimeout\t%s: %s\n' "$g" "$id" "$who" "$label" "$who" "$kind" "$cmd" "$why" >>"$ROWS"
			echo "  TIMEOUT [$who] $label: $cmd: $why"
			continue
		fi
		okrows+=("$g	$id.$who	$label	$who	$kind")
		okcmds+=("$cmd")
		args+=(-n "$id.$who" "$cmd")
	done
	[ ${#args[@]} = 0 ] && return 0
	dl=$(( ${#args[@]} / 3 * (runs + warm) * CMD_S + GROUP_S ))
	echo "  timing [$who] $g: $(( ${#args[@]} / 3 )) command(s) x $ROUNDS round(s) x $runs runs (deadline ${dl}s a round)"
	local -a rev=()
	for ((i = ${#args[@]} - 3; i >= 0; i -= 3)); do rev+=("${args[@]:i:3}"); done
	for r in $(seq "$ROUNDS"); do
		# Odd rounds run the commands in reverse order, so a slow drift of
		# the machine does not favour the rows that come first.
		local -a order=("${args[@]}")
		[ $((r % 2)) = 0 ] && order=("${rev[@]}")
		as_who "$who" timeout -k 5 "$dl" hyperfine -N --style none --warmup "$warm" --runs "$runs" \
			"${HF_X[@]}" --export-json "$OUT/$g.$who.r$r.json" "${order[@]}" >"$OUT/$g.$who.r$r.out" 2>"$OUT/$g.$who.r$r.err"
		rc=$?
		if [ $rc = 124 ] || [ $rc = 137 ]; then
			# hyperfine was killed: no JSON for this round, and the rows
			# are reported timeout (other rounds' samples are dropped).
			TIMEOUTS=$((TIMEOUTS + 1))
			rm -f "$OUT/$g.$who".r*.json
			why="timeout after ${dl}s: $(cat "$OUT/$g.$who.r$r.out" "$OUT/$g.$who.r$r.err" | grep -v '^ *$' | tail -2 | tr '\t\n' '  ' | cut -c1-200)"
			echo "  TIMEOUT [$who] $g after ${dl}s; commands:"
			for k in "${!okrows[@]}"; do
				echo "    $(cut -f2 <<<"${okrows[k]}"): ${okcmds[k]}"
				printf '%s\ttimeout\t%s: %s\n' "${okrows[k]}" "${okcmds[k]}" "$why" >>"$ROWS"
			done
			echo "    output: ${why#*: }"
			return 0
		fi
		[ $rc = 0 ] || { echo "  hyperfine failed for $g ($who):"; tail -3 "$OUT/$g.$who.r$r.err"; }
	done
	for k in "${!okrows[@]}"; do
		printf '%s\tok\t%s\n' "${okrows[k]}" "${okcmds[k]}" >>"$ROWS"
	done
}
na_row() {  # group id who label reason
	want "$1" || return 0
	printf '%s\t%s.%s\t%s\t%s\tlat\tna\t%s\n' "$1" "$2" "$3" "$4" "$3" "$5" >>"$ROWS"
	echo "  n/a  [$3] $4: $5"
}

# The bwrap equivalent of `cloister run` defaults on this host: the same
# system dirs read-only (symlinks stay symlinks, as cloister keeps them).
bwrap_defaults() {
	local d out="--unshare-all --die-with-parent --new-session --clearenv --setenv PATH /usr/bin:/bin"
	for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
		if [ -L $d ]; then out="$out --symlink $(readlink $d) $d"
		elif [ -d $d ]; then out="$out --ro-bind $d $d"; fi
	done
	echo "$out --proc /proc --dev /dev --tmpfs /tmp"
}
BWRAP_DEF=$(bwrap_defaults)
# Smithers' argv as issue 6 gives it; the elided "…" are filled with its
# environment (PATH, HOME) and the system dirs it binds.
SMITHERS="--die-with-parent --clearenv --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup --proc /proc --dev /dev --tmpfs /tmp --ro-bind $WORK/req /workspace --bind $WORK/res /result --chdir /workspace --setenv PATH /usr/local/bin:/usr/bin:/bin --setenv HOME /workspace --unshare-net --ro-bind /usr /usr --ro-bind /bin /bin --ro-bind /lib /lib --ro-bind /lib64 /lib64 --ro-bind /etc /etc /bin/sh -lc /bin/true"

# `cloister run` cannot use the default seccomp profile until that module
# lands: detect it and label the rows.
SC="" SCL=""
for who in user root; do
	[ -n "$(who_missing $who)" ] && continue
	why=$(probe $who "$CL run -- /bin/true")
	case $why in *seccomp*) SC="--seccomp unconfined" SCL=" (seccomp unconfined: default profile not built yet)" ;; esac
	break
done

echo "cloister bench ($([ $QUICK = 1 ] && echo quick || echo full)), work dir $WORK"
if [ -n "${CLOISTER_BENCH_PLANT:-}" ]; then
	echo "PLANT: ${CLOISTER_BENCH_PLANT%%|*}"
	group PLANT user lat "${CLOISTER_BENCH_PLANT//@BIN@/$BIN}"
fi
echo "P1: Smithers' bwrap argv"
group P1 user lat \
	"p1.bwrap|Debian bwrap, Smithers' argv + sh -lc /bin/true|bwrap $SMITHERS" \
	"p1.cloister|cloister bwrap, Smithers' argv + sh -lc /bin/true|$CL bwrap $SMITHERS" \
	"p1min.bwrap|Debian bwrap --ro-bind / / true|bwrap --ro-bind / / true" \
	"p1min.cloister|cloister bwrap --ro-bind / / true|$CL bwrap --ro-bind / / true"
compare "P1 cloister bwrap / bwrap (Smithers' argv)" p1.cloister.user p1.bwrap.user ratio "≤ 0.5×"
compare "P1 cloister bwrap / bwrap (--ro-bind / / true)" p1min.cloister.user p1min.bwrap.user ratio "≤ 0.5×"

echo "P2: launch of /bin/true"
for who in user root; do
	group P2 $who lat \
		"p2.true|/bin/true (no sandbox)|/bin/true" \
		"p2.floor|floor: clone3 + id maps + exec|$BIN/floor /bin/true" \
		"p2.cloister|cloister run defaults$SCL|$CL run $SC -- /bin/true" \
		"p2.limits|cloister run defaults + --memory 256m --cpus 1 --pids 256|$CL run $SC --memory 256m --cpus 1 --pids 256 -- /bin/true" \
		"p2.bwrap|bwrap --unshare-all, equivalent mounts|bwrap $BWRAP_DEF /bin/true"
	compare "P2 cloister run / floor ($who)" p2.cloister.$who p2.floor.$who ratio "≤ 1.3×"
	compare "P2 cloister run / bwrap ($who)" p2.cloister.$who p2.bwrap.$who ratio "≤ 0.6×"
	compare "P2 limits add, median ($who)" p2.limits.$who p2.cloister.$who diff "≤ 0.3 ms"
	[ $QUICK = 1 ] && break
done

echo "P3: throughput, $PAR_P launchers x $PAR_N launches"
group P3 user batch:$((PAR_P * PAR_N)) \
	"p3.floor|floor, $PAR_P x $PAR_N|$BIN/par $PAR_P $PAR_N $BIN/floor /bin/true" \
	"p3.cloister|cloister run$SCL, $PAR_P x $PAR_N|$BIN/par $PAR_P $PAR_N $CL run $SC -- /bin/true" \
	"p3.bwrap|bwrap --unshare-all, $PAR_P x $PAR_N|$BIN/par $PAR_P $PAR_N bwrap $BWRAP_DEF /bin/true"
compare "P3 cloister / bwrap launches per second" p3.cloister.user p3.bwrap.user rate "≥ 2×"

echo "S1: exec into a running session"
. "$TOP/bench/session.sh"
session_rows

if want P4; then
echo "P4: resident overhead while the command sleeps"
if [ -n "$(who_missing root)" ]; then
	for r in cloister bwrap floor; do na_row P4 p4.$r root "$r" "needs root (cloister's init is non-dumpable, so P4 runs as root)"; done
else
	why=$(probe root "$CL run $SC -- /bin/true")
	if [ -n "$why" ]; then na_row P4 p4.cloister root "cloister supervisor + init" "$why"
	else "$BIN/pss.sh" "$PSS_N" P4 p4.cloister.root "cloister run$SCL: supervisor + init" $CL run $SC -- sleep 30 >>"$ROWS"; fi
	"$BIN/pss.sh" "$PSS_N" P4 p4.bwrap.root "bwrap --unshare-all: all bwrap processes" bwrap $BWRAP_DEF sleep 30 >>"$ROWS"
	"$BIN/pss.sh" "$PSS_N" P4 p4.floor.root "floor: the waiting parent" $BIN/floor sleep 30 >>"$ROWS"
	compare "P4 cloister resident (supervisor + init)" p4.cloister.root "" value "≤ 1024 KiB"
fi

fi
if want P5; then
echo "P5: seccomp"
DOCKER_PROFILE=$TOP/tests/fixtures/docker-default-seccomp.json
[ -f "$DOCKER_PROFILE" ] || DOCKER_PROFILE=/work/shared/fixtures/docker-default-seccomp.json
cp "$DOCKER_PROFILE" "$BIN/docker.json" 2>/dev/null && chmod a+r "$BIN/docker.json"
# There is no compiled-program cache (issue #14): a profile file is compiled
# on every launch; compiling once to raw BPF is the caller's way around it.
"$CL" seccomp compile "$BIN/docker.json" -o "$BIN/docker.bpf" 2>/dev/null && chmod a+r "$BIN/docker.bpf"
group P5 user lat \
	"p5.unconfined|cloister run --seccomp unconfined|$CL run --seccomp unconfined -- /bin/true" \
	"p5.default|cloister run --seccomp default (built-in program)|$CL run --seccomp default -- /bin/true" \
	"p5.docker|cloister run --seccomp docker.json (compiled each launch)|$CL run --seccomp $BIN/docker.json -- /bin/true" \
	"p5.dockerbpf|cloister run --seccomp-bpf docker.bpf (seccomp compile once)|$CL run --seccomp-bpf $BIN/docker.bpf -- /bin/true" \
	"p5.ppidu|getppid x $GETPPID_N, --seccomp unconfined|$CL run --seccomp unconfined --ro $BIN:/b -- /b/getppid $GETPPID_N" \
	"p5.ppidd|getppid x $GETPPID_N, --seccomp default|$CL run --seccomp default --ro $BIN:/b -- /b/getppid $GETPPID_N"
compare "P5 default / unconfined launch" p5.default.user p5.unconfined.user ratio "≤ 1.1×"
compare "P5 getppid loop default / unconfined" p5.ppidd.user p5.ppidu.user ratio "≤ 1.3×"
compare "P5 Docker profile JSON / precompiled BPF" p5.docker.user p5.dockerbpf.user ratio "report"

fi
if want P6; then
echo "P6: workspace diff"
# One tree of 20,000 files, 200 changes made in the timed command itself
# (cloister: inside the sandbox's overlay; git: in a committed copy, reset
# by --prepare), so both rows pay for the same edits.
WSD=$WORK/ws
mkdir -p "$WSD"; chmod 777 "$WSD"; cp bench/ws.sh "$BIN/"; chmod a+rx "$BIN/ws.sh"
P6_CAP="$CL run $SC --workspace $WSD/tree --diff-out $WSD/out.json --ro $BIN:/b -- /b/ws.sh change $WSD/tree"
why=$(who_missing user)
[ -z "$why" ] && { as_who user "$BIN/ws.sh" setup "$WSD" >/dev/null 2>&1 || why="generating the tree failed"; }
[ -z "$why" ] && why=$(probe user "$P6_CAP")
if [ -n "$why" ]; then
	na_row P6 p6.capture user "cloister --workspace capture (20k files, 200 changes)" "$why"
else
	as_who user cp "$WSD/out.json" "$WSD/bundle.json"
	HF_X=(--prepare "$BIN/ws.sh reset $WSD")
	group P6 user lat \
		"p6.capture|cloister run --workspace + --diff-out, 20k files, 200 changes|$P6_CAP" \
		"p6.git|git add -A && git diff --cached, same tree and changes|$BIN/ws.sh git $WSD" \
		"p6.apply|cloister diff apply of that bundle (200 patches)|$CL diff apply $WSD/bundle.json $WSD/apply"
	HF_X=()
	compare "P6 workspace capture / git add -A && git diff --cached" p6.capture.user p6.git.user ratio "≤ 0.5×"
	compare "P6 diff apply, 200 patches (ms)" p6.apply.user "" value "report"
fi

fi
echo "Network"
group NET user lat \
	"net.host|cloister run --network host$SCL|$CL run $SC --network host -- /bin/true" \
	"net.none|cloister run --network none$SCL|$CL run $SC --network none -- /bin/true" \
	"net.floorshare|floor without CLONE_NEWNET|$BIN/floor -n /bin/true" \
	"net.floor|floor (all namespaces)|$BIN/floor /bin/true"
compare "NET none / host launch (cloister)" net.none.user net.host.user ratio "report"
compare "NET new netns costs (cloister, ms)" net.none.user net.host.user diff "report"
compare "NET new netns costs (floor, ms)" net.floor.user net.floorshare.user diff "report"
if want NET; then
why=$(probe user "$CL run $SC --publish 127.0.0.1:18080:80 -- /bin/true")
if [ -n "$why" ]; then
	na_row NET net.publish user "--publish relay throughput vs direct loopback (1 GiB)" "$why"
else
	# 1 GiB per transfer (quick: 256 MiB), 200 connections for setup latency.
	as_who user "$BIN/relay.sh" $([ $QUICK = 1 ] && echo "1 268435456 50" || echo "3 1073741824 200") \
		"$CL" "$BIN/blast" "$OUT/relay" >>"$ROWS" 2>"$OUT/relay.err"
	compare "NET --publish throughput / direct loopback" relay.publish.user relay.direct.user ratio "≥ 0.5×"
	compare "NET --publish connection setup / direct" relay.latrelay.user relay.latdirect.user ratio "report"
fi

fi
if want DOCKER; then
echo "docker (context)"
if timeout 5 docker info >/dev/null 2>&1; then
	group DOCKER root lat "docker.run|docker run --rm, same limits, busybox true|docker run --rm --network none --memory 256m --cpus 1 --pids-limit 256 busybox true"
else
	na_row DOCKER docker.run root "docker run --rm ... true" "no docker daemon answers on this host"
fi

fi
# The report goes under the build directory, so a run leaves the checkout
# clean; `make bench-record` (bench/record.sh) copies a full run into the
# committed bench/results/ and docs/performance.md on purpose.
NAME=latest MODE=full
[ $QUICK = 1 ] && NAME=quick MODE=quick
RES=${CLOISTER_BENCH_RESULTS:-$TOP/build/bench/results}
mkdir -p "$RES"
python3 bench/report.py "$OUT" "$RES/$NAME" $MODE || exit 1
# No plottable row (all n/a or timeout) is no reason to lose the report.
gnuplot "$RES/$NAME.gp" 2>"$OUT/gnuplot.err" || { echo "bench: no plot: $(grep -m1 . "$OUT/gnuplot.err")"; : >"$RES/$NAME.svg"; }
rm -f "$RES/$NAME.gp" "$RES/$NAME.dat"
cat "$RES/$NAME.md"
echo "wrote $RES/$NAME.md $NAME.json $NAME.svg (make bench-record copies a full run into bench/results/)"
# Nothing may outlive the bench: no process running the copied binaries,
# no mount under the work dir. Checked after the report is written, and
# named if found.
LEFT=0
sleep 1   # a killed sandbox's supervisor reaps its init; give it a moment
if pids=$(pgrep -f "$WORK/" | grep -vx "$$"); then
	echo "bench: processes left behind:"; ps -o pid=,args= -p "$(echo $pids | tr ' ' ,)"; LEFT=1
fi
if grep -F "$WORK" /proc/self/mountinfo; then echo "bench: mounts left behind (above)"; LEFT=1; fi
[ -s "$OUT/relay.err" ] && { echo "bench: relay samples that failed:"; cat "$OUT/relay.err"; }
[ $TIMEOUTS = 0 ] || echo "bench: $TIMEOUTS group(s) timed out (reported timeout in the table)"
[ $TIMEOUTS = 0 ] && [ $LEFT = 0 ] && ! grep -q timeout "$OUT/relay.err" 2>/dev/null
