#!/bin/bash
# Where a `cloister run -- /bin/true` launch spends its time, next to the
# floor and bwrap: CLOISTER_TRACE phase medians, CPU vs wall, strace -c -f -w
# and perf stat. Writes bench/results/breakdown.md.
#   bench/breakdown.sh [N]    (N traced launches, default 200)
# As root it measures as CLOISTER_TEST_USER (the rootless case), like run.sh.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
N=${1:-200}
TEST_USER=${CLOISTER_TEST_USER:-cloister-test}
make -s all build/bench/floor build/bench/tstamp || exit 1
WORK=$(mktemp -d /tmp/cloister-breakdown.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp build/cloister build/bench/floor build/bench/tstamp "$WORK/"
chmod -R a+rX "$WORK"; chmod 1777 "$WORK"
as_user() {
	if [ "$(id -u)" = 0 ] && id "$TEST_USER" >/dev/null 2>&1; then
		runuser -u "$TEST_USER" -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
	else
		"$@"
	fi
}
who=$( [ "$(id -u)" = 0 ] && id "$TEST_USER" >/dev/null 2>&1 && echo "$TEST_USER" || id -un)
SC=""
as_user "$WORK/cloister" run -- /bin/true 2>&1 | grep -q seccomp && SC="--seccomp unconfined"
CL="$WORK/cloister run $SC -- /bin/true"
FL="$WORK/floor /bin/true"
BW="bwrap --unshare-all --die-with-parent --new-session --clearenv --setenv PATH /usr/bin:/bin"
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc; do
	if [ -L $d ]; then BW="$BW --symlink $(readlink $d) $d"; elif [ -d $d ]; then BW="$BW --ro-bind $d $d"; fi
done
BW="$BW --proc /proc --dev /dev --tmpfs /tmp /bin/true"
R=bench/results/breakdown.md
mkdir -p bench/results

{
echo "# Where the launch time goes ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "As \`$who\`; \`cloister run $SC -- /bin/true\`, the floor and \`bwrap --unshare-all\` with"
echo "equivalent mounts. Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)."
echo
echo "## Launch phases (CLOISTER_TRACE=1, median of $N launches)"
echo
# Stamps go to a file, not a pipe: a pipe reader woken 17 times per launch
# would compete with the launch for the 2 CPUs.
as_user env CLOISTER_TRACE=1 "$WORK/tstamp" "$N" $CL 2>"$WORK/trace" >/dev/null
python3 bench/timeline.py <"$WORK/trace"
echo
echo "Same driver, no trace: totals (median of $N)"
echo
echo "| launcher | median ms |"
echo "|---|---|"
for c in "$CL" "$FL" "$BW" "/bin/true"; do
	name=${c%% *}; name=${name##*/}
	as_user "$WORK/tstamp" "$N" $c 2>"$WORK/trace" >/dev/null
	m=$(python3 bench/timeline.py <"$WORK/trace" | sed -n 's/.*median total \([0-9.]*\) ms/\1/p')
	echo "| $name | $m |"
done
echo
echo "## CPU vs wall (hyperfine: user+sys of the whole process tree vs wall)"
echo
as_user hyperfine -N --style none -w 5 -r 100 --export-json "$WORK/cpu.json" \
	-n cloister "$CL" -n floor "$FL" -n bwrap "$BW" -n true /bin/true >/dev/null 2>&1
python3 - "$WORK/cpu.json" <<'EOF'
import json, sys
print("| launcher | wall ms (mean) | user ms | sys ms | CPU/wall | off-CPU ms |")
print("|---|---|---|---|---|---|")
for r in json.load(open(sys.argv[1]))["results"]:
    w, u, s = r["mean"] * 1e3, r["user"] * 1e3, r["system"] * 1e3
    print(f"| {r['command']} | {w:.2f} | {u:.2f} | {s:.2f} | {100 * (u + s) / w:.0f}% | {max(0, w - u - s):.2f} |")
EOF
echo
echo "CPU is summed over all processes of the tree (they run on 2 CPUs, so it can"
echo "exceed the serial path); kernel work deferred to kworkers (netns cleanup,"
echo "RCU callbacks) is in neither column. bwrap's total here is below its on-CPU"
echo "time in the scheduler view (part of its tree escapes rusage): compare"
echo "launchers' CPU with the scheduler view."
echo
echo "## strace -f -c -w (wall time inside each syscall, one launch each, top 12)"
for c in "$CL" "$FL" "$BW"; do
	name=${c%% *}; name=${name##*/}
	echo; echo "### $name"; echo; echo '```'
	as_user strace -f -c -w -o "$WORK/strace.$name" $c >/dev/null 2>&1
	head -16 "$WORK/strace.$name"; tail -2 "$WORK/strace.$name"
	echo '```'
done
echo
echo "## perf stat (software events; hardware counters are not exposed in this VM)"
for c in "$CL" "$FL" "$BW"; do
	name=${c%% *}; name=${name##*/}
	echo; echo "### $name"; echo; echo '```'
	if perf stat -r 50 -e task-clock,context-switches,cpu-migrations,page-faults true >/dev/null 2>&1; then
		as_user perf stat -r 50 -e task-clock,context-switches,cpu-migrations,page-faults $c 2>&1 >/dev/null |
			grep -E 'task-clock|context|migrations|faults|elapsed'
	else
		echo "perf stat is not usable here"
	fi
	echo '```'
done
} >"$R"
cat "$R"

# Scheduler view (root only): per launch, the time its processes spent on
# CPU, runnable but waiting for a CPU, and asleep in expedited RCU grace
# periods (mount-namespace teardown and lazy umount wait for one).
if [ "$(id -u)" = 0 ] && perf sched record -o "$WORK/probe.data" true >/dev/null 2>&1; then
	{
	echo
	echo "## Scheduler view (perf sched, 40 launches each)"
	echo
	echo "Summed over the launch's processes (they overlap on 2 CPUs), ms per launch."
	echo "perf itself slows every context switch, so compare rows, not absolute times."
	echo
	echo "| launcher | wall | on CPU | runnable, waiting for a CPU | asleep in expedited RCU grace periods | RCU waits |"
	echo "|---|---|---|---|---|---|"
	for c in "$CL" "$FL" "$BW"; do
		name=${c%% *}; name=${name##*/}
		perf sched record -o "$WORK/sched.data" -- runuser -u "$TEST_USER" -- \
			"$WORK/tstamp" 40 $c >/dev/null 2>"$WORK/stamps" || continue
		perf sched timehist -i "$WORK/sched.data" -w 2>/dev/null >"$WORK/wake"
		python3 - "$name" "$WORK/stamps" "$WORK/wake" <<'PY'
import re, sys
name, stamps, wake = sys.argv[1:]
comms = {"cloister", "true", "floor", "bwrap"}
spans, t0 = [], 0
for line in open(stamps):
    p = line.split()
    if len(p) >= 4 and p[0] == "cloister-trace:":
        if p[3] == "spawn":
            t0 = int(p[1])
        elif p[3] == "reaped":
            spans.append(int(p[1]) - t0)
n = len(spans) or 1
waker, run, delay, rcu, nrcu = {}, 0.0, 0.0, 0.0, 0
for l in open(wake):
    m = re.match(r"\s*[\d.]+\s+\[\d+\]\s+(\S+)\[(\d+)\]\s+awakened:\s+(\S+)\[(\d+)\]", l)
    if m:
        waker[m.group(4)] = m.group(1)
        continue
    m = re.match(r"\s*[\d.]+\s+\[\d+\]\s+(\S+)\[(\d+)\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", l)
    if m and m.group(1) in comms:
        w, d, r = map(float, m.group(3, 4, 5))
        run += r
        delay += d
        if waker.pop(m.group(2), "").startswith("rcu_exp"):
            rcu += w
            nrcu += 1
print(f"| {name} | {sum(spans) / n / 1e6:.2f} | {run / n:.2f} | {delay / n:.2f} | {rcu / n:.2f} | {nrcu / n:.1f} |")
PY
	done
	} | tee -a "$R"
fi

# Refresh the copy quoted in docs/performance.md.
if [ -f docs/performance.md ]; then
	python3 - docs/performance.md "$R" <<'PY'
import re, sys
doc, text = sys.argv[1], open(sys.argv[2]).read()
s = open(doc).read()
a, b = "<!-- bench:breakdown:begin -->", "<!-- bench:breakdown:end -->"
if a in s and b in s:
    # The raw strace/perf stat dumps stay in bench/results/breakdown.md.
    a2, b2 = text.find("## strace"), text.find("## Scheduler view")
    if a2 >= 0 and b2 > a2:
        text = text[:a2] + "strace -c and perf stat output: bench/results/breakdown.md.\n\n" + text[b2:]
    text = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", text, flags=re.M)
    s = s[:s.index(a) + len(a)] + "\n" + text.strip() + "\n" + s[s.index(b):]
    open(doc, "w").write(s)
PY
fi
