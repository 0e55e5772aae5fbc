#!/bin/bash
# The opt-in hardening policy of bwrap mode (issue #10, item 5): with
# CLOISTER_BWRAP_POLICY naming a file, Smithers' unchanged bwrap argv gets
# limits and hardening bwrap cannot give it. Each attack is shown to work
# without the policy (under Debian's bwrap and cloister alike), then to be
# stopped with it; a bad policy file is one line and exit 1, nothing run.
source "$(dirname "$0")/difflib.bash"
TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")

# Smithers 0.32's bubblewrapArgs() (src/effect/process-runner.js), for a
# request dir $T_TMP/req (/workspace, read-only) and result dir $T_TMP/res
# (/result), no volumes, allowNetwork false, env {PATH} as it sets it.
smithers_argv() {  # COMMAND -> SM_ARGV
	local p
	SM_ARGV=(--die-with-parent --clearenv --unshare-user --unshare-pid --unshare-ipc
		--unshare-uts --unshare-cgroup --proc /proc --dev /dev --tmpfs /tmp
		--ro-bind "$T_TMP/req" /workspace --bind "$T_TMP/res" /result --chdir /workspace
		--setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		--unshare-net)
	for p in /usr /bin /lib /lib64; do [ -e "$p" ] && SM_ARGV+=(--ro-bind "$p" "$p"); done
	SM_ARGV+=(/bin/sh -lc "$1")
}
setup_dirs() {
	mkdir -p "$T_TMP/req" "$T_TMP/res"
	chmod 755 "$T_TMP" "$T_TMP/req"; chmod 777 "$T_TMP/res"
	echo "request data" >"$T_TMP/req/input.txt"
}
# Writes the policy JSON given as $1 to $T_TMP/policy.json (mode 0644).
policy() {
	printf '%s\n' "$1" >"$T_TMP/policy.json"; chmod 644 "$T_TMP/policy.json"
}
HARD='"seccomp":"default","new_session":true,"drop_capabilities":true,"proc_masks":true'
# Runs Smithers' argv for COMMAND under WHO (bwrap, cloister, or policy =
# cloister with the policy file); OUT/ERR/RC.
smithers() {  # WHO COMMAND
	local who=$1
	smithers_argv "$2"
	if [ "$who" = policy ]; then
		CLOISTER_BWRAP_POLICY=$T_TMP/policy.json "$CL" bwrap "${SM_ARGV[@]}" >"$T_TMP/o" 2>"$T_TMP/e"
	else
		impl "$who" "${SM_ARGV[@]}" >"$T_TMP/o" 2>"$T_TMP/e"
	fi
	RC=$?; OUT=$(cat "$T_TMP/o"); ERR=$(cat "$T_TMP/e")
}

# The client still works: same output, same files, same exit codes.
t_normal_command_still_works() {
	local who cmd='cat input.txt; echo written >/result/out; id -u; exit 3'
	need_bwrap; setup_dirs
	policy "{\"timeout\":60,\"output_limit\":\"1m\",$HARD}"
	smithers bwrap "$cmd"; local want="$RC $OUT"
	assert_eq "3 request data
$(id -u)" "$want" "Debian's bwrap ($ERR)"
	for who in cloister policy; do
		rm -f "$T_TMP/res/out"
		smithers $who "$cmd"
		assert_eq "$want" "$RC $OUT" "$who ($ERR)"
		assert_eq written "$(cat "$T_TMP/res/out")" "$who: file written to /result"
	done
}

# TIOCSTI on the caller's terminal (stdin is the terminal bwrap was run
# on): bwrap shares the caller's session, so the byte lands in the
# caller's input; the policy's new session and seccomp stop it.
sti_on_tty() {  # WHO -> OUT (transcript)
	local who=$1 pre=()
	[ "$who" = policy ] && pre=(env CLOISTER_BWRAP_POLICY="$T_TMP/policy.json") && who=cloister
	cp "$HELPERS/ttyprobe" "$T_TMP/req/" || fail "ttyprobe helper not built (make check builds it)"
	smithers_argv "/workspace/ttyprobe sti; /workspace/ttyprobe ctty"
	if [ "$who" = bwrap ]; then set -- "$BW"; else set -- "$CL" bwrap; fi
	OUT=$("${TTYRUN[@]}" -- bash -c '
		p=$1; shift
		"$@"; echo "rc=$?"
		echo "after $("$p" state)"' _ "$HELPERS/ttyprobe" "${pre[@]}" "$@" "${SM_ARGV[@]}" 2>&1 | tr -d '\r')
}
t_tiocsti_into_callers_terminal_stopped() {
	local who
	need_bwrap; setup_dirs; policy "{$HARD}"
	# The control: the same probe on a terminal of the bare host. Where the
	# host kernel refuses TIOCSTI (legacy_tiocsti=0), bwrap must too.
	local host; host=$("${TTYRUN[@]}" -- "$HELPERS/ttyprobe" sti 2>&1 | tr -d '\r')
	case $host in
	*"sti(0): ok"*) note "host terminal: TIOCSTI injects" ;;
	*"sti(0): "*) note "host terminal: TIOCSTI refused: $host" ;;
	*) fail "host terminal control: $host" ;;
	esac
	for who in bwrap cloister; do
		sti_on_tty $who
		if [[ "$host" == *"sti(0): ok"* ]]; then
			assert_contains "$OUT" "sti(0): ok" "$who without policy: the attack works ($OUT)"
			assert_contains "$OUT" "ctty-sti: ok" "$who without policy: injected through /dev/tty ($OUT)"
		else
			assert_not_contains "$OUT" "sti(0): ok" "$who without policy, host refuses ($OUT)"
		fi
	done
	sti_on_tty policy
	assert_contains "$OUT" "rc=0" "with the policy ($OUT)"
	assert_contains "$OUT" "sti(0): EPERM" "with the policy: TIOCSTI refused ($OUT)"
	assert_contains "$OUT" "ctty-open: ENXIO" "with the policy: no controlling terminal"
	assert_contains "$OUT" "pending=0" "with the policy: nothing injected"
}

# kill(0, SIGUSR1) from inside: without a new session the command is still
# in the caller's process group, pid namespace or not.
signal_group() {  # WHO -> OUT
	local who=$1
	smithers_argv 'trap "" USR1; kill -USR1 0; echo sent-$?'
	if [ "$who" = policy ]; then
		set -- env CLOISTER_BWRAP_POLICY="$T_TMP/policy.json" "$CL" bwrap
	elif [ "$who" = bwrap ]; then set -- "$BW"; else set -- "$CL" bwrap; fi
	OUT=$(setsid -w bash -c 'trap "echo caller-got-USR1" USR1; "$@"; echo "rc=$?"' _ \
		"$@" "${SM_ARGV[@]}" 2>&1)
}
t_signal_to_callers_group_stopped() {
	local who
	need_bwrap; setup_dirs; policy "{$HARD}"
	for who in bwrap cloister; do
		signal_group $who
		assert_contains "$OUT" "caller-got-USR1" "$who without policy: the signal arrives ($OUT)"
	done
	signal_group policy
	assert_contains "$OUT" "rc=0" "with the policy ($OUT)"
	assert_contains "$OUT" "sent-0" "with the policy: the kill itself succeeded"
	assert_not_contains "$OUT" "caller-got-USR1" "with the policy: the caller's group"
}

# Capabilities and /proc as the policy says (bwrap: full set in the
# sandbox's user namespace is not asked for here; cloister run's masks).
t_caps_and_proc_masks() {
	local probe='grep CapBnd /proc/self/status; echo "timer_list: $(stat -c %F /proc/timer_list)"'
	need_bwrap; setup_dirs; policy "{$HARD}"
	smithers bwrap "$probe"; local want="$OUT"
	assert_contains "$want" "timer_list: regular" "Debian's bwrap shows /proc/timer_list ($ERR)"
	smithers cloister "$probe"
	assert_eq "$want" "$OUT" "cloister without the policy ($ERR)"
	smithers policy "$probe; grep -c '^Seccomp:[[:space:]]*2' /proc/self/status"
	assert_eq "0 CapBnd:	0000000000000000
timer_list: character special file
1" "$RC $OUT" "with the policy: no capabilities, /proc masked, seccomp on ($ERR)"
}

# A fork bomb (bounded, so that without limits it ends by itself) under a
# pids limit: forks fail and nothing is left. Needs a cgroup: root only (an
# unprivileged caller gets a one-line refusal, t_limits_refused_rootless).
if is_root; then
t_fork_bomb_stopped() {
	local m; m=$(marker bomb)
	need_bwrap; setup_dirs
	policy "{\"pids\":40,\"timeout\":120,$HARD}"
	bomb="i=0; while [ \$i -lt 300 ]; do sleep 600 & i=\$((i+1)); done; echo spawned-all; : $m"
	smithers cloister "$bomb; kill -9 -1"
	assert_contains "$OUT" "spawned-all" "without the policy every fork succeeds ($ERR)"
	smithers policy "$bomb"
	assert_not_contains "$OUT" "spawned-all" "with the policy ($ERR)"
	assert_contains "$ERR" "fork" "with the policy: the shell says fork failed"
	[ "$RC" != 0 ] || fail "with the policy the bomb exited 0"
	assert_gone "$m"
}
t_memory_bomb_stopped() {
	local m; m=$(marker mem)
	need_bwrap; setup_dirs
	policy "{\"memory\":\"64m\",\"memory_swap\":\"64m\",\"timeout\":120,$HARD}"
	bomb="python3 -c 'b = bytearray(512 << 20); print(\"allocated\", len(b) >> 20)' $m"
	smithers cloister "$bomb"
	assert_eq "0 allocated 512" "$RC $OUT" "without the policy ($ERR)"
	smithers policy "$bomb"
	assert_not_contains "$OUT" "allocated" "with the policy"
	assert_eq 137 "$RC" "with the policy: killed by the OOM killer ($ERR)"
	assert_gone "$m"
}
# The default path, seen in a private mount namespace (the host's /etc is
# shared with everything else on the machine and stays untouched).
t_default_policy_file_used() {
	need_bwrap; setup_dirs
	mkdir -p "$T_TMP/etc/cloister"
	printf '{"memory":"64m","memory_swap":"64m",%s}\n' "$HARD" >"$T_TMP/etc/cloister/bwrap.json"
	chmod 644 "$T_TMP/etc/cloister/bwrap.json"
	smithers_argv 'grep CapBnd /proc/self/status'
	# A tmpfs on /etc of a private mount namespace: nothing is created on
	# the host's /etc (cloister needs nothing from /etc to start).
	OUT=$(unshare -m --propagation private sh -c \
		'mount -t tmpfs none /etc && mkdir /etc/cloister && cp "$1" /etc/cloister/ || exit 99
		 shift; "$@"' _ "$T_TMP/etc/cloister/bwrap.json" "$CL" bwrap "${SM_ARGV[@]}" 2>&1)
	assert_eq "CapBnd:	0000000000000000" "$OUT" "with /etc/cloister/bwrap.json"
}
# Owned by someone other than root or the caller: refused.
t_policy_owned_by_other_refused() {
	setup_dirs; policy "{$HARD}"
	chown 65534 "$T_TMP/policy.json"
	smithers policy 'echo ran'
	assert_eq "1" "$RC" "exit code"
	assert_eq "bwrap: policy $T_TMP/policy.json: owned by uid 65534, not by root or the caller; refusing it" \
		"$ERR" "the one line"
	assert_eq "" "$OUT" "nothing ran"
}
else
# Limits that need a cgroup fail loudly without one: never unlimited.
t_limits_refused_rootless() {
	local k
	setup_dirs
	for k in '"memory":"64m"' '"pids":40' '"cpus":"0.5"'; do
		policy "{$k}"
		smithers policy 'echo ran'
		assert_eq 1 "$RC" "$k: exit code ($OUT)"
		assert_eq "" "$OUT" "$k: nothing ran"
		assert_contains "$ERR" "cannot create cgroup" "$k: the reason"
		assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c .)" "$k: one line ($ERR)"
	done
}
fi

# Timeout: the whole sandbox goes, exit 124 (cloister's timeout code).
t_timeout_kills_sandbox() {
	local m; m=$(marker slow)
	setup_dirs; policy "{\"timeout\":1,$HARD}"
	smithers policy "sleep 60 & sleep 60; : $m"
	assert_eq 124 "$RC" "exit code ($ERR)"
	assert_gone "$m"
}

# Output cap: what passes is cut at the limit, said once on stderr.
t_output_limit() {
	setup_dirs; policy "{\"output_limit\":1000,$HARD}"
	smithers policy 'head -c 100000 /dev/zero | tr "\0" x'
	assert_eq 1000 "${#OUT}" "bytes passed on"
	assert_contains "$ERR" "output cut at 1000 bytes" "stderr"
}

# A bad policy is one line on stderr, exit 1 (bwrap's failure code), and
# nothing runs; the file is named in the line.
t_bad_policy_one_line_exit_1() {
	local doc want
	setup_dirs
	while IFS='|' read -r doc want; do
		policy "$doc"
		smithers policy 'echo ran >/result/ran'
		assert_eq 1 "$RC" "exit code for $doc"
		assert_eq "bwrap: policy $T_TMP/policy.json: $want" "$ERR" "message for $doc"
		[ ! -e "$T_TMP/res/ran" ] || fail "the command ran with $doc"
	done <<-'EOF'
	{"memroy":"1g"}|unknown key "memroy"
	{"memory":"lots"}|"memory" 'lots': expected a size like 512m
	{"pids":0}|"pids" '0': expected a number from 1 to 4194304
	{"timeout":-1}|"timeout": expected a string or a non-negative number
	{"new_session":"yes"}|"new_session": expected true or false
	{"seccomp":"strict"}|"seccomp" 'strict': expected "default", "unconfined" or an absolute path
	[1]|expected a JSON object
	{"memory":|line 2: unexpected token near end of file
	EOF
	policy '{}'; chmod 666 "$T_TMP/policy.json"
	smithers policy 'echo ran'
	assert_eq "1 bwrap: policy $T_TMP/policy.json: writable by group or others (mode 0666); refusing it (chmod go-w)" \
		"$RC $ERR" "world-writable file"
	CLOISTER_BWRAP_POLICY=$T_TMP/missing.json "$CL" bwrap --ro-bind / / true 2>"$T_TMP/e"
	assert_eq "1 bwrap: policy $T_TMP/missing.json: opening it: No such file or directory" \
		"$? $(cat "$T_TMP/e")" "missing file named"
	CLOISTER_BWRAP_POLICY= "$CL" bwrap --ro-bind / / true 2>"$T_TMP/e"
	assert_eq "1 bwrap: CLOISTER_BWRAP_POLICY is set but empty: name a policy file or unset it" \
		"$? $(cat "$T_TMP/e")" "empty variable"
	mkfifo "$T_TMP/fifo"
	CLOISTER_BWRAP_POLICY=$T_TMP/fifo "$CL" bwrap --ro-bind / / true 2>"$T_TMP/e"
	assert_eq "1 bwrap: policy $T_TMP/fifo: not a regular file" "$? $(cat "$T_TMP/e")" "a fifo"
}

# No policy file: one failed open, nothing else on the launch path.
t_no_policy_costs_one_open() {
	command -v strace >/dev/null || fail "strace missing: tests/deps.sh installs it"
	strace -f -qq -e trace=openat,open,stat,newfstatat,statx,access,readlink -o "$T_TMP/tr" \
		"$CL" bwrap --ro-bind / / true || fail "cloister bwrap failed under strace"
	assert_eq 1 "$(grep -c '/etc/cloister\|bwrap\.json' "$T_TMP/tr")" \
		"policy lookups: $(grep '/etc/cloister\|bwrap\.json' "$T_TMP/tr")"
	assert_contains "$(cat "$T_TMP/tr")" '"/etc/cloister/bwrap.json", O_RDONLY|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC) = -1 ENOENT' "the one open"
}

run_tests
