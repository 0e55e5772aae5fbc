#!/bin/bash
# Core isolation, asserted from inside the sandbox: namespaces, ids,
# capabilities, mounts, network, environment, exit codes, supervision.
source "$(dirname "$0")/../lib.sh"

# Until the default seccomp profile is in, core tests choose no filter
# explicitly (the seccomp suite covers the filter).
SC=${CORE_SECCOMP:---seccomp=default}
run_in() { clr run "$SC" "$@"; }
rw_id_probe

t_runs_true() { run_in -- true; assert_eq 0 "$RC" "exit code"; }

t_pid_namespace() {
	run_in -- sh -c 'echo $$; cat /proc/1/comm; ls /proc | grep -E "^[0-9]+$" | sort -n | tail -n 1'
	assert_eq 0 "$RC" "exit code"
	set -- $OUT
	assert_eq 2 "$1" "command pid (init is 1)"
	assert_eq cloister-init "$2" "pid 1 is cloister's init"
	[ "$3" -lt 20 ] || fail "sandbox sees host processes (highest pid $3)"
}

# The host uid the sandbox runs as: the caller's, except for root (an
# unprivileged id unless --host-root; docs/security.md, "Root callers").
host_uid() { if is_root; then echo 1879048192; else id -u; fi; }

t_uid_map_default() {
	run_in -- sh -c 'id -u; id -g; cat /proc/self/uid_map'
	set -- $OUT
	assert_eq "$(id -u)" "$1" "uid inside"
	assert_eq "$(id -g)" "$2" "gid inside"
	assert_eq "$(id -u) $(host_uid) 1" "$3 $4 $5" "uid_map"
	is_root || return 0   # --host-root only changes anything for root
	run_in --host-root -- cat /proc/self/uid_map
	assert_eq "0 0 1" "$(echo $OUT)" "uid_map with --host-root"
}

t_uid_zero() {
	run_in --uid 0 --gid 0 -- sh -c 'id -u; id -g; cat /proc/self/uid_map'
	set -- $OUT
	assert_eq "0 0" "$1 $2" "ids inside"
	assert_eq "0 $(host_uid) 1" "$3 $4 $5" "uid_map"
}

t_no_capabilities() {
	run_in --uid 0 -- sh -c 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status'
	assert_eq 0 "$RC" "exit code"
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_contains "$OUT" "$f:	0000000000000000" "$f"
	done
	assert_contains "$OUT" "NoNewPrivs:	1" "no_new_privs"
}

t_cap_add_kept() {
	run_in --uid 0 --cap-add CAP_NET_BIND_SERVICE -- sh -c 'grep -E "^(CapEff|CapBnd)" /proc/self/status'
	assert_contains "$OUT" "CapEff:	0000000000000400" "effective"
	assert_contains "$OUT" "CapBnd:	0000000000000400" "bounding"
}

t_hostname() {
	run_in -- hostname; assert_eq cloister "$OUT" "default hostname"
	run_in --hostname box1 -- hostname; assert_eq box1 "$OUT" "--hostname"
}

t_readonly_system_dirs() {
	run_in -- sh -c 'for d in /usr /etc /bin; do touch $d/.x 2>/dev/null && echo writable $d; done; touch /.x 2>/dev/null && echo writable root; echo done'
	assert_eq done "$OUT" "system dirs and / must be read-only"
}

t_tmp_is_writable_tmpfs() {
	run_in -- sh -c 'echo hi > /tmp/f && cat /tmp/f && stat -f -c %T /tmp && stat -c %a /tmp'
	assert_eq "hi
tmpfs
1777" "$OUT" "/tmp"
}

t_host_paths_absent() {
	run_in -- sh -c 'for d in /home /root /var /opt /srv /mnt /run /work; do [ -e $d ] && echo present $d; done; echo done'
	assert_eq done "$OUT" "host paths must not be visible"
}

t_mount_flags() {
	run_in -- cat /proc/self/mountinfo
	echo "$OUT" | awk '$5=="/usr" || $5=="/tmp" || $5=="/" {print $5, $6}' >flags
	while read -r mp opts; do
		case $opts in *nosuid*) ;; *) fail "$mp not nosuid: $opts" ;; esac
		case $opts in *nodev*) ;; *) fail "$mp not nodev: $opts" ;; esac
	done <flags
	grep -q '^/usr ro,' flags || fail "/usr not ro: $(cat flags)"
	grep -q '^/ ro,' flags || fail "/ not ro: $(cat flags)"
}

t_proc_masked() {
	run_in -- sh -c 'cat /proc/keys 2>&1 | head -c 100; echo; echo x > /proc/sys/kernel/hostname 2>&1 && echo wrote-sys; echo x > /proc/sysrq-trigger 2>&1 && echo wrote-sysrq; cat /proc/timer_list 2>/dev/null | wc -c'
	assert_not_contains "$OUT" "wrote-sys" "/proc/sys read-only"
	assert_not_contains "$OUT" "wrote-sysrq" "/proc/sysrq-trigger"
	assert_eq 0 "$(echo "$OUT" | tail -n 1)" "/proc/timer_list masked"
	run_in -- grep -c ' /proc/sys ' /proc/self/mountinfo
	assert_eq 1 "$OUT" "/proc/sys is its own read-only mount"
}

t_dev_minimal() {
	run_in -- sh -c 'ls /dev | tr "\n" " "; echo x > /dev/null && head -c 4 /dev/zero | wc -c; [ -e /dev/sda ] || [ -e /dev/vda ] && echo disk; test -c /dev/pts/ptmx && echo ptmx'
	for n in null zero full random urandom tty pts shm ptmx fd stdin stdout stderr; do
		assert_contains "$OUT" "$n" "/dev/$n"
	done
	assert_not_contains "$OUT" "disk" "no host disks"
	assert_contains "$OUT" "ptmx" "devpts instance"
}

t_loopback_only_and_up() {
	run_in -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; cat /sys/class/net/lo/operstate 2>/dev/null; grep -c "" /proc/net/if_inet6'
	set -- $OUT
	assert_eq lo "$1" "only lo"
	run_in -- python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); c=socket.create_connection(s.getsockname()); print("connected")'
	assert_eq connected "$OUT" "loopback works (lo is UP)"
}

t_network_host() {
	run_in --network host -- sh -c 'tail -n +3 /proc/net/dev | wc -l'
	[ "$OUT" -ge 1 ] || fail "host network"
	[ "$(tail -n +3 /proc/net/dev | wc -l)" = "$OUT" ] || fail "host interfaces differ: $OUT"
}

t_env_cleared() {
	FOO=leak clr run "$SC" --env A=1 --env B=two -- env
	assert_contains "$OUT" "A=1" "--env"
	assert_contains "$OUT" "B=two" "--env"
	assert_contains "$OUT" "PATH=" "PATH kept"
	assert_not_contains "$OUT" "FOO=" "caller env cleared"
	assert_not_contains "$OUT" "HOME=" "caller env cleared"
	FOO=inherited clr run "$SC" --inherit-env -- env
	assert_contains "$OUT" "FOO=inherited" "--inherit-env"
}

t_exit_codes() {
	run_in -- sh -c 'exit 3'; assert_eq 3 "$RC" "exit 3"
	run_in -- sh -c 'kill -TERM $$'; assert_eq 143 "$RC" "SIGTERM -> 143"
	run_in -- sh -c 'kill -KILL $$'; assert_eq 137 "$RC" "SIGKILL -> 137"
	run_in -- /nonexistent/cmd; assert_eq 127 "$RC" "not found"
	assert_contains "$ERR" "cloister: executing /nonexistent/cmd: No such file or directory" "message"
	run_in -- no-such-command-xyz; assert_eq 127 "$RC" "not in PATH"
	run_in -- /etc/passwd; assert_eq 126 "$RC" "not executable"
}

t_timeout() {
	# The command never ends by itself (its stdin's writer stays open):
	# only the timeout can end the run.
	mkfifo gate; exec 9<>gate
	run_in --timeout 0.5 --json-status "$T_TMP/st.json" -- sh -c 'read x' <gate
	exec 9>&-
	assert_eq 124 "$RC" "timeout exit"
	assert_contains "$(cat "$T_TMP/st.json")" '"timed_out":true' "status"
}

t_json_status() {
	run_in --json-status "$T_TMP/st.json" -- sh -c 'exit 7'
	local j; j=$(cat "$T_TMP/st.json")
	for k in '"exit_code":7' '"signal":null' '"timed_out":false' '"oom_killed":false' \
	         '"output_truncated":false' '"wall_ms":' '"user_ms":' '"sys_ms":' \
	         '"memory_peak_bytes":' '"runtime":"native"' '"child_pid":'; do
		assert_contains "$j" "$k" "status field"
	done
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T_TMP/st.json" || fail "invalid JSON: $j"
	run_in --json-status fd:3 -- sh -c 'kill -9 $$' 3>"$T_TMP/fd.json"
	assert_contains "$(cat "$T_TMP/fd.json")" '"exit_code":137,"signal":9' "fd status"
}

t_dry_run_json() {
	clr run --dry-run --json --ro /srv:/data --memory 64m -- ls -l
	assert_eq 0 "$RC" "dry-run"
	echo "$OUT" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["argv"]==["ls","-l"]; assert any(m["destination"]=="/data" for m in p["mounts"]); assert p["limits"]["memory"]==64<<20' \
		|| fail "dry-run JSON: $OUT"
}

t_binds() {
	mkdir -p "$T_TMP/ro" "$T_TMP/rw"; echo data > "$T_TMP/ro/f"
	run_in "${RW_ID[@]}" --ro "$T_TMP/ro:/data" --rw "$T_TMP/rw" -- sh -c "cat /data/f; echo x > /data/g 2>/dev/null && echo wrote-ro; echo out > $T_TMP/rw/new"
	assert_eq data "$OUT" "ro bind content, not writable"
	assert_eq out "$(cat "$T_TMP/rw/new")" "rw bind writes reach the host"
}

t_here_and_workdir() {
	mkdir -p "$T_TMP/proj"; cd "$T_TMP/proj" && echo hello > mine
	run_in "${RW_ID[@]}" --here -- sh -c 'pwd; cat mine'
	assert_eq "$T_TMP/proj
hello" "$OUT" "--here"
	run_in -w /tmp -- pwd; assert_eq /tmp "$OUT" "--workdir"
	run_in -- pwd; assert_eq / "$OUT" "default cwd"
	run_in -w /nonexistent -- true
	assert_eq 125 "$RC" "missing workdir"
	assert_contains "$ERR" "changing to working directory /nonexistent" "message"
}

t_tmpfs_option() {
	run_in --tmpfs /scratch:size=1m -- sh -c 'head -c 2000000 /dev/zero > /scratch/f 2>/dev/null; stat -c %s /scratch/f'
	[ "$OUT" -le 1048576 ] || fail "tmpfs size not applied: $OUT"
}

t_rootfs() {
	mkdir -p "$T_TMP/root/bin"
	cp "$HELPERS/static-echo" "$T_TMP/root/bin/echo" 2>/dev/null || skip "static-echo helper not built"
	# (a root caller needs an idmappable rootfs to create its mount points)
	run_in "${RW_ID[@]}" --rootfs "$T_TMP/root" -- /bin/echo from-rootfs
	assert_eq 0 "$RC" "rootfs run: $ERR"
	assert_eq from-rootfs "$OUT" "rootfs"
}

t_zombies_reaped() {
	# Three orphans are re-parented to init. Once they have all exited
	# (no live "sleep 0.05" left), init must reap them: the zombie count
	# has to reach 0 (it stays at 3 if init does not reap).
	run_in -- sh -c '
		zombies() { cat /proc/[0-9]*/stat 2>/dev/null | awk "{print \$3}" | grep -c Z; }
		live() { cat /proc/[0-9]*/stat 2>/dev/null | awk "\$2 == \"(sleep)\" && \$3 != \"Z\"" | grep -c .; }
		for i in 1 2 3; do sh -c "sleep 0.05 &"; done
		i=0; while [ "$(live)" != 0 ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done
		i=0; while [ "$(zombies)" != 0 ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done
		zombies'
	assert_eq 0 "$OUT" "zombies left"
}

t_signal_forwarded() {
	"$CL" run "$SC" "${RW_ID[@]}" --rw "$T_TMP" -- sh -c "trap 'echo got > $T_TMP/got; exit 3' TERM; touch $T_TMP/ready; while :; do sleep 0.05; done" &
	local pid=$!
	wait_until test -e "$T_TMP/ready" || fail "sandbox did not start"
	kill -TERM $pid
	wait $pid; local rc=$?
	assert_eq 3 "$rc" "command's exit after forwarded SIGTERM"
	assert_eq got "$(cat "$T_TMP/got" 2>/dev/null)" "trap ran"
}

# Signals the caller ignores (a background job's SIGINT and SIGQUIT, nohup's
# SIGHUP) are back at their default action in the sandbox; bwrap mode
# keeps them ignored, exactly as Debian's bwrap does. (What else the caller
# ignores depends on who started the suite: make's recipe shells already
# have glibc's signals 32 and 33 ignored, so bwrap is compared with bwrap.)
t_ignored_signals_not_inherited() {
	local ign='trap "" INT QUIT HUP USR1; exec "$@"' bw deb
	assert_eq "SigIgn:	0000000000000000" "$(bash -c "$ign" _ "$CL" run -- grep SigIgn /proc/self/status)" "run"
	bw=$(bash -c "$ign" _ "$CL" bwrap --ro-bind / / --unshare-pid grep SigIgn /proc/self/status)
	deb=$(bash -c "$ign" _ /usr/bin/bwrap --ro-bind / / --unshare-pid grep SigIgn /proc/self/status)
	assert_eq "$deb" "$bw" "bwrap mode, against Debian's bwrap"
	[ $((0x${bw##*[[:space:]]} & 0x207)) = $((0x207)) ] || fail "bwrap mode lost the ignored INT QUIT HUP USR1: $bw"
}

t_die_with_parent() {
	local m; m=$(marker dwp)
	mkfifo gate
	"$CL" run "$SC" -- sh -c "read x; : $m" <gate &
	local pid=$!
	exec 9>gate   # held open: only the death of cloister can end the sandbox
	wait_until eval '! none_with "$m"' || fail "sandbox did not start"
	kill -KILL $pid; wait $pid 2>/dev/null
	assert_gone "$m"
}

t_setup_errors_are_one_line() {
	local m; m=$(marker err)
	run_in --ro /nonexistent/source -- true "$m"
	assert_eq 125 "$RC" "missing bind source"
	assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line"
	assert_contains "$ERR" "cloister: bind source /nonexistent/source: No such file or directory" "message"
	run_in --bogus-flag -- true
	assert_eq 125 "$RC" "bad flag"
	assert_contains "$ERR" "unknown option '--bogus-flag'" "message"
	run_in --rw relative/path -- true
	assert_eq 125 "$RC" "relative path"
	assert_contains "$ERR" "must be absolute" "message"
	clr bogus-subcommand
	assert_eq 125 "$RC" "bad subcommand"
	assert_no_process "$m"
}

t_namespaces_refused_is_clear() {
	# Inside a sandbox the default seccomp profile refuses new namespaces,
	# exactly as a host with user namespaces disabled would.
	clr run --ro "$CL:/cl" -- /cl run -- true
	assert_eq 125 "$RC" "nested run without --allow-nested"
	assert_contains "$ERR" "creating the sandbox namespaces (run \`cloister check\`" "message"
	assert_contains "$ERR" "Operation not permitted" "errno"
}

t_refuses_setuid_bits() {
	cp "$CL" "$T_TMP/cl"; chmod g+s "$T_TMP/cl" || skip "cannot set setgid here"
	[ -g "$T_TMP/cl" ] || skip "filesystem dropped the setgid bit"
	"$T_TMP/cl" run -- true 2>"$T_TMP/err"; local rc=$?
	assert_eq 125 "$rc" "setgid binary refused"
	assert_contains "$(cat "$T_TMP/err")" "refusing to run setuid or setgid" "message"
}

t_version_and_help() {
	clr version; assert_contains "$OUT" "cloister " "version"
	clr run --help; assert_eq 0 "$RC" "run --help"; assert_contains "$OUT" "usage: cloister run" "usage"
	# Output that cannot be written is an error, not a silent success.
	local err
	err=$("$CL" version 2>&1 >/dev/full); assert_eq 125 "$?" "version to /dev/full"
	assert_eq "cloister: writing to stdout: No space left on device" "$err" "its message"
}

# The controls: each feature `cloister check` reports, tried on the bare
# host by other means (util-linux unshare, python's syscalls) as the same
# user; check must report exactly what the host has.
host_features() {  # prints "name=True|False" per feature
	local d; d=$(mktemp -d "$T_TMP/ov.XXXXXX")
	mkdir "$d/l" "$d/u" "$d/w" "$d/m"
	unshare -U -r -m -p -n -i -u -C -f true 2>/dev/null && echo "user namespaces=True" || echo "user namespaces=False"
	unshare -U -r -m sh -c "mount -t overlay overlay -o lowerdir=$d/l,upperdir=$d/u,workdir=$d/w $d/m" 2>/dev/null \
		&& echo "overlay in userns=True" || echo "overlay in userns=False"
	python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
try:
    os.close(os.pidfd_open(os.getpid())); print("pidfd=True")
except OSError:
    print("pidfd=False")
r = libc.syscall(435, None, 0)  # clone3 with size 0: EINVAL if it exists
print("clone3=%s" % (r == 0 or ctypes.get_errno() != 38))'
}
t_check() {
	local host; host=$(host_features)
	note "host: $(echo $host | tr '\n' ' ')"
	clr check; assert_eq 0 "$RC" "check"
	assert_contains "$OUT" "user namespaces" "check output"
	clr check --json
	local got; got=$(printf '%s' "$OUT" | python3 -c 'import json,sys
d = {p["name"]: p["ok"] for p in json.load(sys.stdin)}
for n in ("user namespaces", "overlay in userns", "pidfd", "clone3"): print("%s=%s" % (n, d[n]))') \
		|| fail "check --json: $OUT"
	assert_eq "$host" "$got" "check reports what the bare host has"
}

run_tests
