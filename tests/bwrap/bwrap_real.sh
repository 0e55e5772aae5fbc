#!/bin/bash
# Differential: argvs as real bwrap users build them (Smithers, a Flatpak-
# like launch through --args, an agent sandbox with --seccomp FD), then the
# features newer than Debian's bwrap 0.8 (overlays, --argv0, --level-prefix)
# and cloister's extensions, checked against their documented behaviour.
source "$(dirname "$0")/difflib.bash"
MKBPF=$TOP/tests/bwrap/mkbpf.py

# Smithers' bubblewrap runtime, argument for argument (the probe travels in
# the request bundle, as a tool script would).
t_smithers_argv() {
	local who
	mkdir -p "$T_TMP/req"; echo "task input" >"$T_TMP/req/input.txt"
	cp "$PROBE" "$T_TMP/req/probe"
	for who in bwrap cloister; do
		rm -rf "$T_TMP/res"; mkdir -p "$T_TMP/res"
		impl $who --die-with-parent --clearenv --unshare-user --unshare-pid --unshare-ipc \
			--unshare-uts --unshare-cgroup --proc /proc --dev /dev --tmpfs /tmp \
			--ro-bind "$T_TMP/req" /workspace --bind "$T_TMP/res" /result --chdir /workspace \
			--setenv HOME /tmp --setenv PATH /usr/bin:/bin --setenv SMITHERS_RUN_ID r1 \
			--unshare-net --ro-bind /usr /usr --ro-bind-try /bin /bin --ro-bind-try /lib /lib \
			--ro-bind-try /lib64 /lib64 --ro-bind /etc /etc \
			/bin/sh -lc 'cat input.txt; echo done >/result/out.txt; touch /workspace/x 2>/dev/null || echo req-ro; ./probe ids ns cwd env mounts pid' \
			>"$T_TMP/$who.out" 2>"$T_TMP/$who.err"
		echo $? >"$T_TMP/$who.rc"
		host_tree "$T_TMP/res" >"$T_TMP/$who.tree"
	done
	assert_eq 0 "$(cat "$T_TMP/bwrap.rc")" "bwrap exit code: $(cat "$T_TMP/bwrap.err")"
	assert_eq 0 "$(cat "$T_TMP/cloister.rc")" "cloister exit code: $(cat "$T_TMP/cloister.err")"
	same_out
	assert_eq "$(cat "$T_TMP/bwrap.tree")" "$(cat "$T_TMP/cloister.tree")" "result files on the host"
}
t_smithers_argv_exit_code() {
	mkdir -p "$T_TMP/req" "$T_TMP/res"
	both --die-with-parent --clearenv --unshare-user --unshare-pid --unshare-ipc --unshare-uts \
		--unshare-cgroup --proc /proc --dev /dev --tmpfs /tmp --ro-bind "$T_TMP/req" /workspace \
		--bind "$T_TMP/res" /result --chdir /workspace --unshare-net --ro-bind /usr /usr \
		--ro-bind-try /bin /bin --ro-bind-try /lib /lib --ro-bind-try /lib64 /lib64 \
		/bin/sh -lc 'exit 7'
}
t_flatpak_like_args_fd() {
	printf 'app:x:%s:%s::/home/app:/bin/sh\n' "$(id -u)" "$(id -g)" >"$T_TMP/passwd"
	printf '[Application]\nname=org.example.App\n' >"$T_TMP/info"
	printf '%s\0' --unshare-ipc --unshare-pid --unshare-cgroup-try --die-with-parent \
		--ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
		--symlink usr/bin /bin --symlink usr/sbin /sbin --proc /proc --dev /dev \
		--dir /tmp --dir /var --symlink ../run /var/run --perms 0700 --dir /run/user \
		--setenv XDG_RUNTIME_DIR /run/user --file 5 /etc/passwd \
		--ro-bind "$PROBE" /probe --chdir / >"$T_TMP/args"
	FD5=$T_TMP/passwd FD6=$T_TMP/args FD7=$T_TMP/info both --args 6 --ro-bind-data 7 /.flatpak-info \
		sh -c 'cat /etc/passwd /.flatpak-info; stat -c "%n %a" /run/user /tmp; readlink /var/run; /probe ns env mounts' 
}
t_agent_sandbox_seccomp() {
	# Claude-Code/Codex style: host read-only, a writable workspace, no
	# network, a seccomp program on an fd.
	mkdir -p "$T_TMP/ws"; echo code >"$T_TMP/ws/main.c"
	python3 "$MKBPF" 1 83 258 >"$T_TMP/p.bpf"
	FD5=$T_TMP/p.bpf both --ro-bind / / --bind "$T_TMP/ws" "$T_TMP/ws" --dev /dev --unshare-net \
		--unshare-pid --proc /proc --die-with-parent --new-session --seccomp 5 --chdir "$T_TMP/ws" \
		sh -c 'head -n1 main.c; echo patch >>main.c; touch /usr/x 2>/dev/null || echo host-ro; mkdir d 2>/dev/null || echo mkdir-denied; grep -c : /proc/net/dev; grep Seccomp: /proc/self/status'
	assert_eq "code
patch
patch" "$(cat "$T_TMP/ws/main.c")" "workspace written by both runs"
}
t_agent_sandbox_network_none() {
	both --ro-bind / / --unshare-net --dev /dev sh -c 'cat /proc/net/dev | cut -d: -f1 | tr -d " " | tail -n +3'
}

# ---- newer than Debian's bwrap 0.8: documented behaviour, cloister only ----
mk_layers() {
	mkdir -p "$T_TMP/l1" "$T_TMP/l2" "$T_TMP/up" "$T_TMP/wk"
	echo low >"$T_TMP/l1/f"; echo only1 >"$T_TMP/l1/one"; echo high >"$T_TMP/l2/f"
}
t_tmp_overlay_writes_vanish() {
	mk_layers
	clr bwrap "${SYS[@]}" --overlay-src "$T_TMP/l1" --overlay-src "$T_TMP/l2" --tmp-overlay /o \
		sh -c 'cat /o/f /o/one; echo new >/o/new; rm /o/one; ls /o'
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_eq "high
only1
f
new" "$OUT" "later --overlay-src is on top; writes land in the overlay"
	[ ! -e "$T_TMP/l1/new" ] && [ -e "$T_TMP/l1/one" ] || fail "layers changed"
}
t_overlay_writes_to_upper() {
	mk_layers
	clr bwrap "${SYS[@]}" --overlay-src "$T_TMP/l1" --overlay "$T_TMP/up" "$T_TMP/wk" /o \
		sh -c 'echo w >/o/written; cat /o/f'
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_eq low "$OUT"
	assert_eq w "$(cat "$T_TMP/up/written")" "write reached the upper dir"
	[ ! -e "$T_TMP/l1/written" ] || fail "lower layer changed"
}
t_ro_overlay() {
	mk_layers
	clr bwrap "${SYS[@]}" --overlay-src "$T_TMP/l1" --overlay-src "$T_TMP/l2" --ro-overlay /o \
		sh -c 'cat /o/f; touch /o/x 2>/dev/null || echo ro'
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_eq "high
ro" "$OUT"
}
t_overlay_errors() {
	clr bwrap --tmp-overlay /o true
	assert_eq 1 "$RC" "exit code"
	assert_contains "$ERR" "bwrap: --tmp-overlay requires at least one --overlay-src"
	clr bwrap --overlay-src /usr true
	assert_eq 1 "$RC" "exit code"
	assert_contains "$ERR" "--overlay-src must be followed by"
}
t_argv0() {
	clr bwrap "${SYS[@]}" --proc /proc --argv0 renamed sh -c 'tr "\0" " " </proc/$$/cmdline' 
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_contains "$OUT" "renamed -c"
}
t_level_prefix() {
	clr bwrap --level-prefix --foo
	assert_eq 1 "$RC"
	assert_eq "<3>bwrap: Unknown option --foo" "$ERR"
	clr bwrap --level-prefix --ro-bind / / --chdir / --chdir /usr true
	assert_eq 0 "$RC"
	assert_eq "<4>bwrap: Only the last --chdir option will take effect" "$ERR" "warning level"
}
t_pidns_with_unshare_pid_is_refused() {
	clr bwrap --pidns 3 --unshare-pid --ro-bind / / true 3</proc/self/ns/pid
	assert_eq 1 "$RC"
	assert_contains "$ERR" "not supported by cloister yet"
}
t_userns_with_uid_is_refused() {
	clr bwrap --userns 3 --uid 5 --ro-bind / / true 3</proc/self/ns/user
	assert_eq 1 "$RC"
	assert_contains "$ERR" "not supported by cloister yet"
}

# ---- cloister extensions (only in addition to bwrap's options) ----
t_ext_timeout() {
	local m; m=$(marker timeout)
	clr bwrap --timeout 0.5 --ro-bind / / sh -c 'sleep 30' "$m"
	assert_eq 124 "$RC" "exit code"
	assert_gone "$m"
}
t_ext_json_status_file() {
	clr bwrap --json-status "$T_TMP/st.json" --ro-bind / / sh -c 'exit 5'
	assert_eq 5 "$RC"
	assert_contains "$(cat "$T_TMP/st.json")" '"exit_code":5'
}
t_ext_no_internal_fds_leak() {
	# bwrap passes the caller's fds on; cloister's own (sync socket, relay,
	# cgroup, lock, seccomp) must never reach the command.
	local plain
	clr bwrap --ro-bind / / /bin/ls /proc/self/fd
	plain=$OUT
	clr bwrap --unshare-pid --unshare-net --forward-out 9000:127.0.0.1:9 --timeout 20 \
		--lock-file /etc/passwd --json-status "$T_TMP/st.json" --ro-bind / / /bin/ls /proc/self/fd
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_eq "$plain" "$OUT" "fds seen by the command"
}
t_ext_bad_values() {
	clr bwrap --memory lots --ro-bind / / true
	assert_eq 1 "$RC"; assert_contains "$ERR" "--memory 'lots'"
	clr bwrap --cpus -1 --ro-bind / / true
	assert_eq 1 "$RC"; assert_contains "$ERR" "--cpus '-1'"
	clr bwrap --timeout 0 --ro-bind / / true
	assert_eq 1 "$RC"; assert_contains "$ERR" "--timeout '0'"
}
# --runtime: native (and auto, which can only be native here) run the
# argv; docker and codeplane cannot represent it and are refused before
# anything runs, in one line naming the alternatives.
t_ext_runtime() {
	local rt
	for rt in native auto; do
		clr bwrap --runtime "$rt" --ro-bind / / echo ran
		assert_eq "0 ran" "$RC $OUT" "--runtime $rt ($ERR)"
	done
	for rt in docker codeplane; do
		clr bwrap --runtime "$rt" --ro-bind / / touch "$T_TMP/ran"
		assert_eq 1 "$RC" "--runtime $rt"
		assert_eq "bwrap: --runtime $rt: not available in bwrap mode (the $rt executor cannot represent a bwrap command line: an empty root built from ordered binds, symlinks, --dev and --proc); use --runtime native or cloister run --runtime $rt" "$ERR"
		[ ! -e "$T_TMP/ran" ] || fail "--runtime $rt: the command ran"
	done
	clr bwrap --runtime bogus --ro-bind / / true
	assert_eq "1 bwrap: --runtime 'bogus': expected auto, native, docker or codeplane" "$RC $ERR"
}
t_ext_limits_run_or_refuse_clearly() {
	# Limits need the cgroup backend: either they apply, or nothing runs
	# and the one-line error says why.
	clr bwrap --memory 64m --pids 64 --ro-bind / / echo ran
	if [ "$RC" = 0 ]; then assert_eq ran "$OUT"; else
		assert_eq 1 "$RC"; assert_eq "" "$OUT" "nothing ran"; assert_contains "$ERR" "bwrap: "
	fi
}
t_ext_publish_needs_unshare_net() {
	clr bwrap --publish 8080:80 --ro-bind / / true
	assert_eq 1 "$RC"
	assert_contains "$ERR" "--publish and --forward-out need --unshare-net"
	clr bwrap --unshare-net --publish 80 --ro-bind / / true
	assert_eq 1 "$RC"
	assert_contains "$ERR" "--publish '80'"
}
t_ext_forward_out() {
	local port=$((20000 + RANDOM % 20000)) srv
	python3 -m http.server $port --bind 127.0.0.1 --directory "$T_TMP" >/dev/null 2>&1 &
	srv=$!
	up() { python3 -c "import socket;socket.create_connection(('127.0.0.1',$port))" 2>/dev/null; }
	wait_until up || fail "host server did not start"
	echo hello >"$T_TMP/index.txt"
	clr bwrap --unshare-net --forward-out 8000:127.0.0.1:$port --ro-bind / / --dev /dev \
		python3 -c 'import urllib.request;print(urllib.request.urlopen("http://127.0.0.1:8000/index.txt").read().decode().strip())'
	kill $srv
	assert_eq 0 "$RC" "exit code: $ERR"
	assert_eq hello "$OUT"
}
t_ext_publish() {
	local port=$((20000 + RANDOM % 20000)) out=""
	echo published >"$T_TMP/index.txt"
	# The server says when it listens (the host side of --publish accepts
	# before the server inside is up).
	"$CL" bwrap --unshare-net --publish 127.0.0.1:$port:8080 --ro-bind / / --dev /dev \
		--bind "$T_TMP" "$T_TMP" python3 -c 'import http.server, functools, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.HTTPServer(("127.0.0.1", 8080), h)
open(sys.argv[1] + "/ready", "w").close()
s.serve_forever()' "$T_TMP" >/dev/null 2>&1 &
	local pid=$!
	wait_until test -e "$T_TMP/ready" || fail "server did not start"
	out=$(python3 -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:$port/index.txt', timeout=120).read().decode().strip())")
	kill $pid; wait $pid
	assert_eq published "$out" "fetched through the published port"
}

run_tests
