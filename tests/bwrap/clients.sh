#!/bin/bash
# Real bwrap clients (issue #10, item 4), pinned from npm and cached under
# build/clients (tests/bwrap/clients/install.bash): Codex CLI's
# `codex sandbox`, srt (@anthropic-ai/sandbox-runtime) and Smithers'
# bubblewrap runtime run one scenario set each, once with Debian's bwrap
# first in PATH and once with cloister's bwrap entry (a hard link named
# bwrap, the layout `make install` makes in libexec/cloister), and must
# report the same. Every run also shows which bwrap the client really
# started: the process above the sandboxed command.
# Each client test runs its scenario set twice (Debian's bwrap, cloister):
# 80-110 s quiet, 200-300 s with the machine loaded (node and bun start per
# scenario). The deadline catches a hang, not slowness: more than lib.sh's
# default, set before it is sourced (lib.sh keeps a T_LIMIT already set).
T_LIMIT=${T_LIMIT:-900}
source "$(dirname "$0")/difflib.bash"
NPM=${CLIENTS_NPM:-$TOP/build/clients/npm}
BIN=$NPM/node_modules/.bin
# The native binary the npm launcher runs (node < 23 spawns it as a child
# instead of exec'ing it: a SIGKILL of the launcher would not reach Codex).
CODEX=$NPM/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
INSTALL_ERR=$(bash "$TOP/tests/bwrap/clients/install.bash" "$NPM" 2>&1 >/dev/null) && INSTALLED=1 || INSTALLED=0
need_clients() {
	[ "$INSTALLED" = 1 ] || fail "installing the pinned clients failed: $INSTALL_ERR"
	need_bwrap
	local c; for c in rg socat curl; do command -v $c >/dev/null || fail "$c missing: tests/deps.sh installs it"; done
}

# PATH for WHO: Debian's bwrap, or cloister's entry first.
use_impl() {  # WHO
	mkdir -p "$T_TMP/bwbin"
	if [ "$1" = cloister ]; then
		ln -f "$CL" "$T_TMP/bwbin/bwrap" 2>/dev/null || cp "$CL" "$T_TMP/bwbin/bwrap" || fail "bwrap entry"
		RUNNER=$T_TMP/bwbin/bwrap
		IPATH=$T_TMP/bwbin:/usr/local/bin:/usr/bin:/bin
	else
		RUNNER=$(realpath "$BW")
		IPATH=/usr/local/bin:/usr/bin:/bin
	fi
}

# An HTTP server on 127.0.0.1 (port in PORT), gone with the test's group.
start_server() {
	python3 -c 'import http.server, sys
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_port))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$T_TMP/port" >/dev/null 2>&1 &
	wait_until test -e "$T_TMP/port" || fail "test server did not start"
	PORT=$(cat "$T_TMP/port")
}
CURL='curl -sS -m 10 -o /dev/null -w "%{http_code}\n"'

# The bwrap above process PID (walking up parents): its executable.
runner_of() {  # PID
	local p=$1 e
	while [ "$p" -gt 1 ]; do
		e=$(readlink "/proc/$p/exe" 2>/dev/null) || e=""
		case $e in */bwrap) echo "$e"; return ;; esac
		p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null) || return
		[ -n "$p" ] || return
	done
	echo "none"
}
# The sandboxed python3 whose command line holds MARKER (the client's and
# bwrap's own command lines hold it too).
marked_pid() {
	local p
	for p in $(procs_with "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = python3 ] && { echo "$p"; return 0; }
	done
	return 1
}

# Scenario runner: CLIENT_RUN CMD runs CMD through the client under test
# (set per client below) and prints "rc=N" plus its normalised output.
scenario() {  # NAME CMD...
	local name=$1; shift
	"$@" >"$T_TMP/s.out" 2>"$T_TMP/s.err"
	echo "$name: rc=$? $(tr '\n' ' ' <"$T_TMP/s.out")"
}

# Starts the client on a long command in the background, waits for the
# sandboxed process, reports who runs it, kills the client with SIG, and
# checks that nothing of the sandbox is left.
kill_scenario() {  # SIG RUNFN
	local sig=$1 fn=$2 m pid cpid r left client
	m=$(marker "kill$sig-$WHO")
	"$fn" "python3 -c 'import time; time.sleep(600)' $m" >/dev/null 2>&1 &
	cpid=$!
	wait_until marked_pid "$m" >/dev/null || fail "$WHO: the sandboxed command never started"
	pid=$(marked_pid "$m")
	r=$(runner_of "$pid")
	# The client is the one child of the background job (run functions exec it).
	client=$(pgrep -P "$cpid") || fail "$WHO: no client process under $cpid"
	kill -"$sig" "$client"
	wait "$cpid" 2>/dev/null
	# What the kill leaves is the result (real bwrap included); then it goes.
	T_WAIT=10 wait_until none_with "$m" && left=nothing || left=$(marked_pid "$m" >/dev/null && echo sandbox || echo other)
	for p in $(procs_with "$m"); do kill -KILL "$p" 2>/dev/null; done
	assert_gone "$m"
	echo "kill-$sig: left=$left runner=$([ "$r" = "$RUNNER" ] && echo "$WHO's bwrap" || echo "$r")"
}

# A harness's timeout (coreutils timeout, SIGTERM to the client after 3 s
# of a command that would run 600): exit 124 and nothing left behind.
timeout_scenario() {  # RUNFN
	local m; m=$(marker "timeout-$WHO")
	TO="timeout -s TERM 3" scenario timeout "$1" "python3 -c 'import time; time.sleep(600)' $m"
	assert_gone "$m"
}

compare() {  # CLIENT
	[ -s "$T_TMP/bwrap.res" ] || fail "$1 under Debian's bwrap reported nothing"
	local d
	d=$(diff <(sed "s/bwrap's bwrap/the bwrap in PATH/" "$T_TMP/bwrap.res") \
		<(sed "s/cloister's bwrap/the bwrap in PATH/" "$T_TMP/cloister.res")) ||
		fail "$1: results differ (< Debian's bwrap, > cloister): $d"
}

# --- Codex CLI: `codex sandbox [-c ...] -- CMD` (its Linux sandbox) ---------
# Codex resolves bwrap on PATH, checks its --help for --as-pid-1/--perms,
# and refuses helper links under TMPDIR: its home is kept outside that.
codex_run() {
	(cd "$T_TMP/ws" && exec env PATH="$IPATH" TMPDIR="$T_TMP/tmp" CODEX_HOME="$T_TMP/codex-home" \
		${TO:-} "$CODEX" sandbox "${CX_CFG[@]}" -- sh -c "$1")
}
codex_scenarios() {
	# /tmp (where the test's dirs are) is writable under workspace-write
	# unless excluded; the workspace (cwd) stays writable.
	CX_CFG=(-c 'sandbox_mode="workspace-write"' -c sandbox_workspace_write.exclude_slash_tmp=true
		-c sandbox_workspace_write.exclude_tmpdir_env_var=true)
	scenario hello codex_run 'echo hello'
	scenario read codex_run "cat $T_TMP/outside/secret"
	scenario write-inside codex_run "echo data >$T_TMP/ws/new && cat $T_TMP/ws/new"
	scenario write-outside codex_run "echo data >$T_TMP/outside/new"
	echo "host: $(cat "$T_TMP/ws/new" 2>&1) $(ls "$T_TMP/outside")"
	rm -f "$T_TMP/ws/new"
	scenario net-denied codex_run "$CURL http://127.0.0.1:$PORT/"
	CX_CFG=(-c 'sandbox_mode="workspace-write"' -c 'sandbox_workspace_write.network_access=true')
	scenario net-allowed codex_run "$CURL http://127.0.0.1:$PORT/"
	CX_CFG=()
	scenario exit-code codex_run 'exit 7'
	timeout_scenario codex_run
	kill_scenario TERM codex_run
	kill_scenario KILL codex_run
}

# --- srt: `srt -s SETTINGS -c CMD` ------------------------------------------
srt_settings() {  # ALLOWED_DOMAINS_JSON
	printf '{"network":{"allowedDomains":%s,"deniedDomains":[]},"filesystem":{"denyRead":["%s"],"allowWrite":["%s"],"denyWrite":[]}}\n' \
		"$1" "$T_TMP/outside" "$T_TMP/ws" >"$T_TMP/srt.json"
}
# srt keeps its proxy sockets and an empty dir in TMPDIR; a SIGKILLed srt
# cannot remove them, so they go in the test's own dir, not the host's /tmp.
srt_run() {
	(cd "$T_TMP/ws" && exec env PATH="$IPATH" TMPDIR="$T_TMP/tmp" ${TO:-} "$BIN/srt" -s "$T_TMP/srt.json" -c "$1")
}
srt_scenarios() {
	srt_settings '[]'
	scenario hello srt_run 'echo hello'
	scenario read-denied srt_run "cat $T_TMP/outside/secret"
	scenario write-inside srt_run "echo data >$T_TMP/ws/new && cat $T_TMP/ws/new"
	scenario write-outside srt_run "echo data >/var/tmp/clients-$$-new"
	echo "host: $(cat "$T_TMP/ws/new" 2>&1) $(ls /var/tmp/clients-$$-new 2>&1 | sed 's/.*No such.*/absent/')"
	rm -f "$T_TMP/ws/new"
	scenario net-denied srt_run "$CURL --noproxy '' http://127.0.0.1:$PORT/; $CURL http://127.0.0.1:$PORT/"
	srt_settings '["127.0.0.1"]'
	scenario net-allowed srt_run "$CURL --noproxy '' http://127.0.0.1:$PORT/"
	scenario exit-code srt_run 'exit 7'
	timeout_scenario srt_run
	kill_scenario TERM srt_run
	kill_scenario KILL srt_run
}

# --- Smithers: its bubblewrap executor (create, execute, collect) ----------
sm_run() {  # CMD [ABORT_MS]
	rm -rf "$T_TMP/sm/.smithers/sandboxes/r1/s1/result"
	env PATH="$IPATH" "$BIN/bun" "$TOP/tests/bwrap/clients/smithers-run.mjs" "$NPM" \
		"$T_TMP/sm" "${SM_NET:-0}" "${2:-0}" "$1"
}
# The driver's report line (Smithers' logger writes to stdout too).
sm_report() { sm_run "$@" | grep '^{"ok"'; }
smithers_scenarios() {
	SM_NET=0
	scenario hello sm_report 'echo hello >/result/out'
	scenario read-host sm_report "cat $T_TMP/outside/secret >/result/out 2>&1"
	scenario read-workspace sm_report 'ls /workspace >/result/out; echo x >/workspace/new'
	scenario write-result sm_report 'echo data >/result/out; echo x >/usr/new 2>/dev/null; echo $? >/result/rc'
	echo "host: $(cat "$T_TMP/sm/.smithers/sandboxes/r1/s1/result/out" 2>&1)"
	scenario net-denied sm_report "$CURL http://127.0.0.1:$PORT/ >/result/out 2>&1"
	SM_NET=1 scenario net-allowed sm_report "$CURL http://127.0.0.1:$PORT/ >/result/out 2>&1"
	scenario exit-code sm_report 'exit 7'
	# Smithers' own cancel: the run's AbortSignal SIGKILLs the sandbox's group.
	local m; m=$(marker "timeout-$WHO")
	scenario timeout sm_report "python3 -c 'import time; time.sleep(600)' $m" 1500
	assert_gone "$m"
	kill_scenario TERM sm_run
	kill_scenario KILL sm_run
}

run_client() {  # CLIENT SCENARIO-FN
	local who
	need_clients
	mkdir -p "$T_TMP/ws" "$T_TMP/outside" "$T_TMP/tmp" "$T_TMP/codex-home" "$T_TMP/sm"
	chmod 755 "$T_TMP"
	echo "top secret" >"$T_TMP/outside/secret"
	start_server
	for who in bwrap cloister; do
		WHO=$who; use_impl $who
		rm -rf "$T_TMP/sm/.smithers"
		( "$2" >"$T_TMP/$who.res" 2>"$T_TMP/$who.log" ) || fail "$1 under $who: $(tail -n 3 "$T_TMP/$who.log"); results so far: $(tr "\n" "|" <"$T_TMP/$who.res")"
	done
	compare "$1"
	EXPECT=$(cat "$T_TMP/cloister.res")
}

t_codex() {
	run_client codex codex_scenarios
	assert_contains "$EXPECT" "hello: rc=0 hello" "codex hello"
	assert_contains "$EXPECT" "net-denied: rc=7 000" "codex net denied"
	assert_contains "$EXPECT" "net-allowed: rc=0 200" "codex net allowed"
	assert_contains "$EXPECT" "exit-code: rc=7" "codex exit code"
	assert_contains "$EXPECT" "timeout: rc=124" "codex timeout"
	assert_contains "$EXPECT" "kill-TERM: left=nothing runner=cloister's bwrap" "codex ran cloister; SIGTERM"
	assert_contains "$EXPECT" "kill-KILL: left=nothing runner=cloister's bwrap" "codex SIGKILL"
}
t_srt() {
	run_client srt srt_scenarios
	assert_contains "$EXPECT" "hello: rc=0 hello" "srt hello"
	assert_contains "$EXPECT" "read-denied: rc=1" "srt read denied"
	assert_contains "$EXPECT" "net-denied: rc=7 403 000" "srt net denied"
	assert_contains "$EXPECT" "net-allowed: rc=0 200" "srt net allowed"
	assert_contains "$EXPECT" "exit-code: rc=7" "srt exit code"
	assert_contains "$EXPECT" "timeout: rc=124" "srt timeout"
	assert_contains "$EXPECT" "kill-TERM: left=nothing runner=cloister's bwrap" "srt ran cloister; SIGTERM"
	# srt starts bwrap through `sh -c`: a SIGKILL of srt leaves that shell,
	# bwrap's parent, alive, and the sandbox with it (Debian's bwrap too).
	assert_contains "$EXPECT" "kill-KILL: left=sandbox runner=cloister's bwrap" "srt SIGKILL"
}
t_smithers() {
	run_client smithers smithers_scenarios
	assert_contains "$EXPECT" 'hello: rc=0 {"ok":true,"exitCode":0,"result":{"out":"hello\n"}}' "smithers hello"
	assert_contains "$EXPECT" 'net-allowed: rc=0 {"ok":true,"exitCode":0,"result":{"out":"200\n"' "smithers net allowed"
	assert_contains "$EXPECT" '"exitCode":7' "smithers exit code"
	assert_contains "$EXPECT" 'timeout: rc=0 {"ok":false,"code":"PROCESS_ABORTED"' "smithers abort"
	assert_contains "$EXPECT" "kill-TERM: left=nothing runner=cloister's bwrap" "smithers ran cloister; SIGTERM"
	assert_contains "$EXPECT" "kill-KILL: left=nothing runner=cloister's bwrap" "smithers SIGKILL"
}

# The hardening policy reaches an unchanged Smithers (whose bubblewrap
# runtime refuses memoryLimit/cpuLimit itself): a memory bomb is OOM-killed
# and reported as the command's failure, a normal command still works.
# Smithers passes bwrap only an allowlist of variables (PATH, TMPDIR, ...):
# CLOISTER_BWRAP_POLICY never reaches it, /etc/cloister/bwrap.json does.
# That file is shown to it through an overlay on /etc in a private mount
# namespace (the host's /etc is shared with the whole machine and stays
# untouched). cgroup limits: root only (unprivileged they are refused,
# tests/bwrap/bwrap_policy.sh).
if is_root; then
sm_with_etc_policy() {  # CMD: like sm_report, with $T_TMP/policy.json as /etc/cloister/bwrap.json
	rm -rf "$T_TMP/sm/.smithers/sandboxes/r1/s1/result"
	mkdir -p "$T_TMP/etc-up" "$T_TMP/etc-work"
	unshare -m --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc-up,workdir=$1/etc-work" /etc &&
		mkdir -p /etc/cloister && cp "$1/policy.json" /etc/cloister/bwrap.json || exit 99
		shift; exec "$@"' _ "$T_TMP" env PATH="$IPATH" "$BIN/bun" \
		"$TOP/tests/bwrap/clients/smithers-run.mjs" "$NPM" "$T_TMP/sm" 0 0 "$1" | grep '^{"ok"'
}
t_smithers_with_policy() {
	local bomb="python3 -c 'b = bytearray(512 << 20); print(len(b))' >/result/out"
	need_clients
	mkdir -p "$T_TMP/sm"; chmod 755 "$T_TMP"
	WHO=cloister; use_impl cloister
	printf '{"memory":"64m","memory_swap":"64m","pids":64,"new_session":true,"seccomp":"default"}\n' >"$T_TMP/policy.json"
	chmod 644 "$T_TMP/policy.json"
	scenario bomb sm_report "$bomb" >"$T_TMP/res"
	assert_contains "$(cat "$T_TMP/res")" '"result":{"out":"536870912\n"}' "without the policy the bomb runs"
	CLOISTER_BWRAP_POLICY=$T_TMP/policy.json scenario bomb sm_report "$bomb" >"$T_TMP/res"
	assert_contains "$(cat "$T_TMP/res")" '"result":{"out":"536870912\n"}' \
		"Smithers drops CLOISTER_BWRAP_POLICY from bwrap's environment"
	scenario bomb sm_with_etc_policy "$bomb" >"$T_TMP/res"
	assert_eq 'bomb: rc=0 {"ok":false,"code":"SANDBOX_EXECUTION_FAILED","exitCode":137,"stdout":""} ' \
		"$(cat "$T_TMP/res")" "with /etc/cloister/bwrap.json"
	scenario hello sm_with_etc_policy 'echo hello >/result/out' >"$T_TMP/res"
	assert_eq 'hello: rc=0 {"ok":true,"exitCode":0,"result":{"out":"hello\n"}} ' "$(cat "$T_TMP/res")" \
		"a normal command with the policy"
}
fi

[ "${CLIENTS_NO_RUN:-}" = 1 ] || run_tests
