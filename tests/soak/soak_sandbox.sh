#!/bin/bash
# Fault-injection soak of sandbox mode (`make soak` runs it after
# tests/soak/soak.sh): SOAK_RUNS `cloister sandbox run` of a spec with a
# request bundle, each broken on purpose as soak.sh breaks `cloister run`:
#   kill    SIGKILL of cloister after a random delay (while it validates,
#           ships, runs the command, collects or records);
#   signal  strace SIGKILLs whichever process makes the Nth call of a
#           syscall of setup, shipping, collecting or the state database;
#   error   strace fails the Nth call with an errno.
# After every run: no process left with the run's marker, no mount of the
# soak's paths; an injected error either changed nothing (exit 0, status
# finished) or ended in the documented way: exit 1 or 125 with stderr one
# JSON error line of a documented code (plus, at most, cleanup warnings).
# At the end, after `cloister gc` in rootDir (which reconciles killed runs):
#   - the state database passes SQLite's integrity check;
#   - no row is left in a live state (created/shipped/running): every
#     sandbox is finished, failed or cancelled;
#   - each row's events are numbered 1..n with no gap or repeat, and a
#     run that a SIGKILL ended has a failure recorded;
#   - no sandbox directory holds request/ or tmp/ any more;
#   - the temp/state dirs cloister was pointed at are empty.
# Prints one line per failure and a summary; exits 1 on any failure.
#   SOAK_RUNS=200 SOAK_SEED=N tests/soak/soak_sandbox.sh
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CL=${CLOISTER:-$TOP/${CLOISTER_BUILD:-build}/cloister}
RUNS=${SOAK_RUNS:-200}
SEED=${SOAK_SEED:-$$}
RANDOM=$SEED
command -v strace >/dev/null || { echo "FAIL soak_sandbox: strace is not installed (tests/deps.sh)"; exit 1; }
command -v python3 >/dev/null || { echo "FAIL soak_sandbox: python3 is not installed"; exit 1; }
[ -x "$CL" ] || { echo "FAIL soak_sandbox: no $CL"; exit 1; }
D=$(mktemp -d /tmp/clsbsoak.XXXXXX)
chmod 755 "$D"
ROOT=$D/root
mkdir -p "$D/tmp" "$D/run" "$D/cache" "$D/state" "$D/config" "$D/req" "$ROOT"
echo hello >"$D/req/in.txt"
export TMPDIR=$D/tmp XDG_RUNTIME_DIR=$D/run XDG_CACHE_HOME=$D/cache XDG_STATE_HOME=$D/state \
	XDG_CONFIG_HOME=$D/config
chmod 700 "$D/run"
fails=0 n_kill=0 n_signal=0 n_error=0 n_tolerated=0 n_failed=0 n_125=0 n_loader=0 n_msglost=0

whats=()
# A failure found at the end names sandboxes (sN): say what run N was.
bad() {
	local n
	echo "FAIL soak_sandbox run $i ($what): $*"
	fails=$((fails + 1))
	[ "$i" = end ] || return 0
	for n in $(grep -o '/s[0-9]*\b\| s[0-9]* ' <<<" $* " | tr -dc '0-9\n' | sort -un); do
		echo "    (run $n was: ${whats[n]:-?})"
	done
}
. "$TOP/tests/soak/soak_lib.sh"

# Syscalls to break: the launch, the ship (copy of the request), the
# collect (result bundle reads), the state database (SQLite's I/O and
# locks) and the events log.
SYSCALLS=(clone3 mount pivot_root openat openat2 mkdirat renameat2 unlinkat fchmodat copy_file_range
          read write pwrite64 pread64 fsync fdatasync fcntl flock ftruncate getdents64 newfstatat
          statx linkat symlinkat socketpair sendmsg recvmsg seccomp execve prctl setns wait4 ppoll
          epoll_wait close dup3)
ERRNOS=(EPERM ENOMEM EIO EACCES ENOSPC EINVAL)
errno_for() {  # syscall -> an errno it can really return (see soak.sh)
	case $1 in
	# An injected close(2) failure leaves the fd open, which a real one
	# never does (Linux frees the fd even when close reports an error): a
	# pipe kept open that way hangs its reader. Only SIGKILLs for close.
	wait4|close) return 1 ;;
	ppoll|epoll_wait) echo EINTR ;;
	*) echo "${ERRNOS[RANDOM % ${#ERRNOS[@]}]}" ;;
	esac
}

# The spec of run $i: a unique sandboxId, the marker in the command.
write_spec() {  # command
	python3 - "$ROOT" "$D/req" "s$i" "$1" >"$D/spec.json" <<'PY'
import json, sys
root, req, sid, cmd = sys.argv[1:5]
print(json.dumps({"runId": "soak", "sandboxId": sid, "rootDir": root, "command": cmd,
                  "requestBundlePath": req, "toolTimeoutMs": 60000}))
PY
}
# Starts the run (what goes before cloister: strace ...). Sets PID.
launch() {
	"$@" "$CL" sandbox run --spec "$D/spec.json" --json >"$D/out" 2>"$D/err" &
	PID=$!
}
# Waits for the run; over 90 s is a hang (a failure). Sets RC.
finish() {
	local end=$((SECONDS + 90))
	while kill -0 $PID 2>/dev/null; do
		if [ $SECONDS -ge $end ]; then
			bad "hung: still running after 90 s: $(head -3 "$D/err" | tr '\n' '|')"
			for p in $(procs_with "$m"); do kill -KILL "$p" 2>/dev/null; done
			kill -KILL $PID 2>/dev/null
			break
		fi
		sleep 0.02
	done
	wait $PID 2>/dev/null; RC=$?
}
# stderr of a failed run: the JSON error line (one, of a documented code)
# and nothing else but cleanup warnings. Prints what is wrong, if anything.
check_err() {
	python3 - "$D/err" <<'PY'
import json, sys
codes = {"INVALID_INPUT", "TOOL_PATH_ESCAPE", "TOOL_PATH_INVALID", "SANDBOX_EXECUTION_FAILED",
         "PROCESS_SPAWN_FAILED"}
lines = [l for l in open(sys.argv[1], errors="replace").read().splitlines() if l.strip()]
errs = []
for l in lines:
    if l.startswith("cloister: warning: "):
        continue
    try:
        j = json.loads(l)
    except ValueError:
        print("not a JSON error line: " + l[:200]); sys.exit()
    if not isinstance(j, dict) or j.get("code") not in codes or not j.get("message"):
        print("not a documented error: " + l[:200]); sys.exit()
    errs.append(j)
if len(errs) != 1:
    print("%d JSON error lines" % len(errs))
PY
}
ok_cmd='test "$(cat in.txt)" = hello || exit 9; echo "{\"status\":\"finished\"}"'

# Typical duration of a whole run, for the kill delays.
i=0 what=probe m=clsbsoak-$$-probe
write_spec ": $m; $ok_cmd"
t0=$(date +%s%N)
launch; finish
T=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$RC" = 0 ] && grep -q '"status": *"finished"' "$D/out" ||
	{ echo "FAIL soak_sandbox: a plain run does not work (exit $RC): $(head -3 "$D/err")"; exit 1; }
echo "soak_sandbox: $RUNS runs, seed $SEED, a plain run takes ${T} ms, $CL"

for ((i = 1; i <= RUNS; i++)); do
	m=clsbsoak-$$-$i
	case $((RANDOM % 3)) in
	0)  # SIGKILL of cloister at a random point; half the commands finish at
		# once (the kill lands in setup or the collect), half keep running.
		n_kill=$((n_kill + 1))
		delay=$((RANDOM % (T * 3 / 2 + 20)))
		if [ $((RANDOM % 2)) = 0 ]; then write_spec ": $m; $ok_cmd"; what="kill after ${delay} ms, short command"
		else write_spec ": $m; exec sleep 600"; what="kill after ${delay} ms, long command"; fi
		launch
		sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
		kill -KILL $PID 2>/dev/null; wait $PID 2>/dev/null; RC=$?
		;;
	1)  n_signal=$((n_signal + 1))
		sc=${SYSCALLS[RANDOM % ${#SYSCALLS[@]}]} nth=$((1 + RANDOM % 6))
		what="SIGKILL at $sc #$nth"
		write_spec ": $m; $ok_cmd"
		launch strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc:signal=KILL:when=$nth"
		finish
		case $RC in 134|139) bad "cloister crashed: exit $RC: $(head -3 "$D/err")" ;; esac
		;;
	2)  n_error=$((n_error + 1))
		until sc=${SYSCALLS[RANDOM % ${#SYSCALLS[@]}]} && en=$(errno_for "$sc"); do :; done
		nth=$((1 + RANDOM % 6))
		what="$sc #$nth fails with $en"
		write_spec ": $m; $ok_cmd"
		launch strace -f -qq -o /dev/null -e trace="$sc" -e inject="$sc:error=$en:when=$nth"
		finish
		case $RC in
		0)  n_tolerated=$((n_tolerated + 1))
			grep -q '"status": *"finished"' "$D/out" || bad "exit 0 without a finished status: $(head -c 200 "$D/out")" ;;
		1|125)
			[ "$RC" = 1 ] && n_failed=$((n_failed + 1)) || n_125=$((n_125 + 1))
			msg=$(check_err)
			# A failed write(2) can be the one that prints the message.
			if [ -n "$msg" ] && [ "$sc" = write ] && [ ! -s "$D/err" ]; then n_msglost=$((n_msglost + 1))
			elif [ -n "$msg" ]; then bad "exit $RC: $msg"; fi ;;
		126|127)
			grep -q 'error while loading shared libraries' "$D/err" && n_loader=$((n_loader + 1)) ||
				bad "exit $RC from $sc: $(head -3 "$D/err" | tr '\n' '|')" ;;
		*)  bad "exit $RC (expected 0, 1 or 125): $(head -3 "$D/err" | tr '\n' '|')" ;;
		esac
		;;
	esac
	whats[i]="$what, exit $RC"
	settle no_procs "$m" || bad "processes left:$(procs_with "$m")"
	! grep -qF "$D" /proc/self/mountinfo || bad "host mounts left: $(grep -F "$D" /proc/self/mountinfo | head -2)"
done

# Killed runs are reconciled by gc (docs/spec.md); then the database must
# be whole and every row final.
i=end
what=gc; (cd "$ROOT" && "$CL" gc) >/dev/null 2>"$D/gc.err" || bad "cloister gc failed: $(cat "$D/gc.err")"
what=database
db_problems=$(python3 - "$ROOT/.smithers/cloister.db" <<'PY'
import json, sqlite3, sys
try:
    c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
    ic = c.execute("pragma integrity_check").fetchone()[0]
except sqlite3.Error as e:
    print("cannot read the state database: %s" % e); sys.exit()
if ic != "ok":
    print("integrity_check: " + ic)
final = {}
for sid, st in c.execute("select sandbox_id, status from sandboxes where run_id='soak'"):
    if st not in ("finished", "failed", "cancelled"):
        print("sandbox %s left %s after gc" % (sid, st))
    final[sid] = False
seqs = []
for seq, typ, payload in c.execute("select seq, type, payload_json from events where run_id='soak' order by seq"):
    seqs.append(seq)
    try:
        sid = json.loads(payload).get("sandboxId")
    except ValueError:
        print("event %d: payload is not JSON" % seq); continue
    if typ in ("SandboxCompleted", "SandboxFailed") and sid in final:
        final[sid] = True
if seqs != list(range(1, len(seqs) + 1)):
    print("event seq not 1..%d: gaps at %s" % (len(seqs), sorted(set(range(1, len(seqs) + 1)) - set(seqs))[:10]))
for sid, done in sorted(final.items()):
    if not done:
        print("sandbox %s has no SandboxCompleted/SandboxFailed event" % sid)
PY
)
[ -z "$db_problems" ] || while IFS= read -r l; do bad "$l"; done <<<"$db_problems"
what=dirs
left=$(find "$ROOT/.smithers/sandboxes" -mindepth 3 -maxdepth 3 \( -name request -o -name tmp \) 2>/dev/null | head -5)
[ -z "$left" ] || bad "request/ or tmp/ left after gc: $left"
stray=$(find "$D/tmp" "$D/run" "$D/cache" "$D/state" "$D/config" -mindepth 1 2>/dev/null | head -5)
[ -z "$stray" ] || bad "temp/state files left: $stray"
for p in $(procs_with "clsbsoak-$$-"); do kill -KILL "$p" 2>/dev/null; done
echo "soak_sandbox: $RUNS runs ($n_kill kill, $n_signal signal, $n_error error: $n_tolerated tolerated, $n_failed failed (exit 1), $n_125 refused (125), $n_loader in the dynamic loader, $n_msglost whose message write was the failed call), $fails failures"
rm -rf "$D"
[ $fails = 0 ]
