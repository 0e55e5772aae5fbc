#!/bin/bash
# What `cloister run` bounds with no limit option (issue #14, hole 4): tmpfs
# size caps on /tmp, /dev/shm and --tmpfs; tasks through RLIMIT_NPROC in the
# sandbox's user namespace; and --output-limit, which relays stdout+stderr
# through pipes only when given. See docs/limits.md.
source "$(dirname "$0")/../lib.sh"

MiB=$((1 << 20))
# The default cap of a writable tmpfs: 1 GiB, or a quarter of RAM if less.
default_tmpfs() {
	local ram; ram=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024 ))
	[ $((ram / 4)) -lt $((1 << 30)) ] && echo $((ram / 4)) || echo $((1 << 30))
}
# Size of the filesystem at $1 inside a default sandbox, in bytes.
fs_size() { clr run "${@:2}" -- stat -f -c '%b %S' "$1"; set -- $OUT; echo $(($1 * $2)); }
# tmpfs rounds the size to whole pages.
pages() { echo $(( ($1 + 4095) / 4096 * 4096 )); }

t_tmp_capped_by_default() {
	assert_eq "$(pages "$(default_tmpfs)")" "$(fs_size /tmp)" "/tmp size"
}
t_dev_shm_capped_by_default() {
	assert_eq $((64 * MiB)) "$(fs_size /dev/shm)" "/dev/shm size (the /dev tmpfs)"
	# And the kernel enforces it: 65 MiB do not fit.
	clr run -- sh -c 'head -c 68157440 /dev/zero >/dev/shm/f; echo rc=$?'
	assert_contains "$OUT$ERR" "No space left on device" "filling /dev/shm"
	assert_contains "$OUT" "rc=1"
}
t_tmpfs_option_defaults_and_overrides() {
	assert_eq "$(pages "$(default_tmpfs)")" "$(fs_size /scratch --tmpfs /scratch)" "--tmpfs without size="
	assert_eq $((8 * MiB)) "$(fs_size /tmp --tmpfs /tmp:size=8m)" "--tmpfs /tmp:size=8m"
	clr run --tmpfs /tmp:size=8m -- sh -c 'head -c 9437184 /dev/zero >/tmp/f; echo rc=$?'
	assert_contains "$OUT$ERR" "No space left on device" "filling an 8m /tmp"
	assert_eq $((4096 * MiB)) "$(fs_size /tmp --tmpfs /tmp:size=4g)" "raised with size="
}

t_tasks_limit_set_by_default() {
	clr run -- sh -c 'grep "^Max processes" /proc/self/limits'
	assert_eq 0 "$RC" "run ($ERR)"
	set -- $OUT
	assert_eq "2048 2048" "$3 $4" "RLIMIT_NPROC soft/hard"
	clr run --dry-run --json -- true
	assert_contains "$OUT" '"rlimit_nproc": 2048'
	assert_contains "$OUT" '"output_limit": null'
}
# A root caller's sandbox is an unprivileged host id (docs/security.md,
# "Root callers"), so RLIMIT_NPROC binds it as it binds a user's; only
# --host-root (host root is exempt from RLIMIT_NPROC, the kernel's rule)
# leaves --pids as the bound, tested in limits.sh.
t_fork_bomb_stopped_by_default() {
	clr run -- python3 -c '
import os, time
n = 0
try:
    while n < 5000:
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except OSError as e:
    print(n, e.errno)'
	assert_eq 0 "$RC" "run ($ERR)"
	set -- $OUT
	[ "${1:-0}" -ge 2000 ] && [ "$1" -le 2047 ] || fail "forks before the limit: $OUT"
	assert_eq 11 "${2:-}" "EAGAIN"
}

# ---- --output-limit ----
flood() { clr run --output-limit "$1" --json-status "$T_TMP/st.json" -- sh -c "$2"; }
truncated() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["output_truncated"])' "$T_TMP/st.json"; }

t_output_limit_cuts_a_flood() {
	# 16 MiB asked for, 1 MiB passed on; the command still runs to its end.
	"$CL" run --output-limit 1m --json-status "$T_TMP/st.json" -- sh -c 'head -c 16777216 /dev/zero; exit 3' >"$T_TMP/o" 2>"$T_TMP/e"
	RC=$?
	assert_eq 3 "$RC" "command's exit code"
	assert_eq $MiB "$(stat -c %s "$T_TMP/o")" "bytes passed on"
	assert_eq True "$(truncated)" "output_truncated"
	assert_contains "$(cat "$T_TMP/e")" "output cut at 1048576 bytes (--output-limit)"
}
t_output_limit_shared_by_stdout_and_stderr() {
	"$CL" run --output-limit 10 -- sh -c 'printf 012345; printf abcdef >&2' >"$T_TMP/o" 2>"$T_TMP/e"
	# Which stream comes first is the scheduler's call; the sum is not.
	local o e; o=$(cat "$T_TMP/o"); e=$(cat "$T_TMP/e"); e=${e%%cloister: output cut*}
	assert_eq 10 $(( ${#o} + ${#e} )) "bytes over both streams (stdout '$o', stderr '$e')"
	case "$o$e" in 012345abcd|0123abcdef|abcdef0123|abcd012345) ;; *) fail "bytes passed: '$o' '$e'" ;; esac
}
t_output_under_limit_intact() {
	"$CL" run --output-limit 4m --json-status "$T_TMP/st.json" -- sh -c 'head -c 3145728 /dev/urandom | tee /tmp/x | sha256sum >&2; cat /tmp/x' >"$T_TMP/o" 2>"$T_TMP/e"
	assert_eq 0 "$?" "exit"
	assert_eq "$(cut -d' ' -f1 "$T_TMP/e")" "$(sha256sum <"$T_TMP/o" | cut -d' ' -f1)" "3 MiB intact"
	assert_eq False "$(truncated)" "output_truncated"
	assert_not_contains "$(cat "$T_TMP/e")" "output cut"
}
t_output_passthrough_without_the_option() {
	# No option: the sandbox writes to our fd itself (no relay, no copy).
	"$CL" run -- readlink /proc/self/fd/1 >"$T_TMP/o"
	assert_not_contains "$(cat "$T_TMP/o")" "pipe:" "fd 1 without --output-limit"
	"$CL" run --output-limit 1k -- readlink /proc/self/fd/1 >"$T_TMP/o"
	assert_contains "$(cat "$T_TMP/o")" "pipe:" "fd 1 with --output-limit"
}
t_output_limit_reader_gone() {
	# Our reader exits: the command gets SIGPIPE as with passthrough, and
	# cloister itself neither dies of it nor hangs.
	local rc
	rc=$( { "$CL" run --output-limit 1m -- yes; echo $? >"$T_TMP/rc"; } | head -c 10 >/dev/null; cat "$T_TMP/rc")
	assert_eq 141 "$rc" "yes | head: SIGPIPE in the sandbox"
}
t_output_limit_with_timeout() {
	local t0=$SECONDS
	"$CL" run --timeout 1 --output-limit 1k -- sh -c 'while :; do echo flood; done' >/dev/null 2>&1
	assert_eq 124 "$?" "timed out"
	[ $((SECONDS - t0)) -lt 60 ] || fail "took $((SECONDS - t0)) s"
}
t_output_limit_stalled_reader() {
	# Our reader never reads: the command blocks (as with passthrough) but
	# the supervisor does not, so --timeout still ends the run.
	local rc
	rc=$(python3 - "$CL" <<'PY'
import os, subprocess, sys
r, w = os.pipe()   # r is kept open and never read
p = subprocess.Popen([sys.argv[1], "run", "--timeout", "2", "--output-limit", "64m", "--",
                      "sh", "-c", "while :; do echo flood; done"], stdout=w, stderr=subprocess.DEVNULL)
os.close(w)
try:
    print(p.wait(timeout=60))
except subprocess.TimeoutExpired:
    p.kill(); print("hung")
PY
)
	assert_eq 124 "$rc" "exit with a stalled reader"
}
t_output_limit_bad_input() {
	clr run --output-limit 0 -- true
	assert_eq 125 "$RC"; assert_contains "$ERR" "--output-limit '0': expected a byte count > 0"
	clr run --output-limit lots -- true
	assert_eq 125 "$RC"; assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line"
}

t_check_says_what_is_bounded() {
	clr check
	assert_eq 0 "$RC"
	local line; line=$(printf '%s\n' "$OUT" | grep '^default bounds')
	assert_contains "$line" "/dev/shm 64M"
	assert_contains "$line" "--output-limit"
	assert_contains "$line" "tasks <= 2048"
	if is_root; then assert_contains "$line" "not with --host-root"; fi
	assert_contains "$line" "memory and CPU"
}

run_tests
