#!/bin/bash
# Networking: loopback-only default, host mode, --publish (TCP and UDP,
# rootless; --publish-wait for a server still starting), --forward-out,
# cleanup of relays, and bad input.
source "$(dirname "$0")/../lib.sh"
SC=${CORE_SECCOMP:---seccomp=default}
rw_id_probe
PEER="$TOP/tests/integration/netpeer.py"
IN="--ro $PEER:/peer.py"   # the same script, visible inside the sandbox
port() { python3 "$PEER" free_port "$@"; }
# Waits until something listens on 127.0.0.1:$1 (host side).
listening() { python3 "$PEER" try_connect "$1" 2>/dev/null | grep -q connected; }
wait_listen() { wait_until listening "$1"; }
# Waits for a file the sandboxed server writes once it listens (the host
# side of --publish accepts before the server inside is up).
wait_file() {
	wait_until test -e "$1"
}
# The same, giving up as soon as PID (the cloister run that makes FILE) is gone.
up_or_gone() { [ -e "$1" ] || ! kill -0 "$2" 2>/dev/null; }
wait_up() { wait_until up_or_gone "$1" "$2"; [ -e "$1" ]; }
port_free() { python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(sys.argv[1])))' "$1" 2>/dev/null; }

t_publish_http() {
	local hp; hp=$(port)
	mkdir -p "$T_TMP/r"; chmod 777 "$T_TMP/r"
	# The server says when it listens (the host side of --publish accepts
	# before the server inside is up).
	"$CL" run "$SC" "${RW_ID[@]}" --rw "$T_TMP/r:/r" --publish "$hp:8000" -- python3 -c 'import http.server, os
s = http.server.HTTPServer(("127.0.0.1", 8000), http.server.SimpleHTTPRequestHandler)
open("/r/ready", "w").close()
s.serve_forever()' >/dev/null 2>"$T_TMP/srv.err" &
	local pid=$!
	wait_file "$T_TMP/r/ready" || fail "server did not start: $(cat "$T_TMP/srv.err")"
	local code; code=$(python3 -c 'import urllib.request,sys
print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=120).status)' "$hp" 2>&1)
	kill $pid; wait $pid 2>/dev/null
	assert_eq 200 "$code" "HTTP through --publish"
}

t_publish_concurrent_and_large() {
	local hp; hp=$(port)
	mkdir -p "$T_TMP/r"
	"$CL" run "$SC" $IN "${RW_ID[@]}" --rw "$T_TMP/r:/r" --publish "$hp:9000" --timeout 60 -- python3 /peer.py serve_sink 9000 100 /r/ready 2>"$T_TMP/srv.err" &
	local pid=$!
	wait_file "$T_TMP/r/ready" || fail "server did not start"
	local n; n=$(python3 "$PEER" concurrent "$hp" 100)
	assert_eq 100 "$n" "concurrent connections answered (more than init's queue of 10 requests)"
	wait $pid; assert_eq 0 "$?" "server exit: $(cat "$T_TMP/srv.err")"
	hp=$(port)
	rm -f "$T_TMP/r/ready"
	"$CL" run "$SC" $IN "${RW_ID[@]}" --rw "$T_TMP/r:/r" --publish "$hp:9000" --timeout 60 -- python3 /peer.py serve_sink 9000 1 /r/ready &
	pid=$!
	wait_file "$T_TMP/r/ready" || fail "server did not start"
	local out; out=$(python3 "$PEER" send_blob "$hp" $((64 * 1024 * 1024)))
	wait $pid
	local sent got; sent=$(echo "$out" | sed -n 1p); got=$(echo "$out" | sed -n 2p)
	assert_eq "$sent" "$got" "64 MiB through the relay (sha256, size; half-close)"
}

# A client that connects 300 ms before the server inside listens. The
# server runs first and says so (up), waits for the client's connect (go),
# sleeps 0.3 s, then listens. Prints the client's "served|eof|reset SECS";
# extra cloister options come first.
late_server_run() {
	local hp=$1; shift
	mkdir -p "$T_TMP/r"; chmod 777 "$T_TMP/r"; rm -f "$T_TMP/r/up" "$T_TMP/r/go"
	"$CL" run "$SC" $IN "${RW_ID[@]}" --rw "$T_TMP/r:/r" --publish "$hp:9000" --timeout 60 "$@" \
		-- python3 /peer.py late_sink 9000 /r/up /r/go 0.3 >/dev/null 2>"$T_TMP/srv.err" &
	local pid=$!
	wait_up "$T_TMP/r/up" $pid || { kill $pid 2>/dev/null; fail "server did not start: $(cat "$T_TMP/srv.err")"; }
	python3 "$PEER" late_client "$hp" "$T_TMP/r/go"
	kill_tree_and_wait $pid
}

t_publish_waits_for_a_starting_server() {
	local out
	# The default --publish-wait (2 s) covers a server 0.3 s late.
	out=$(late_server_run "$(port)")
	assert_eq served "${out%% *}" "client connecting 0.3 s before the server listens ($out)"
	# Control: without the wait the same client is reset.
	out=$(late_server_run "$(port)" --publish-wait 0)
	assert_eq reset "${out%% *}" "--publish-wait 0: the first refusal resets the client ($out)"
}

t_publish_wait_bound_then_reset() {
	local hp out secs; hp=$(port)
	mkdir -p "$T_TMP/r"; chmod 777 "$T_TMP/r"
	"$CL" run "$SC" "${RW_ID[@]}" --rw "$T_TMP/r:/r" --publish "$hp:9000" --publish-wait 400 \
		--timeout 60 -- sh -c 'touch /r/up; exec sleep 60' 2>"$T_TMP/srv.err" &
	local pid=$!
	wait_up "$T_TMP/r/up" $pid || { kill $pid 2>/dev/null; fail "sandbox did not start: $(cat "$T_TMP/srv.err")"; }
	out=$(python3 "$PEER" late_client "$hp")
	kill_tree_and_wait $pid
	secs=${out#* }
	assert_eq reset "${out%% *}" "no server inside: the client is reset ($out)"
	# After the bound, and well before the 2 s default.
	python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(0 if 0.35 <= t < 1.8 else 1)' "$secs" ||
		fail "reset after ${secs}s, expected about 0.4 s (--publish-wait 400)"
}

t_publish_wait_bad_input() {
	local v
	for v in abc -1 600001 "" 1.5 10ms; do
		clr run "$SC" --publish-wait "$v" --publish 8080:80 -- true
		assert_eq 125 "$RC" "--publish-wait '$v'"
		assert_contains "$ERR" "--publish-wait '$v': expected milliseconds from 0 to 600000" "message"
		assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line"
	done
	clr run "$SC" --publish-wait 1500 --publish 8080:80 --dry-run --json -- true
	assert_eq 0 "$RC" "dry run: $ERR"
	assert_contains "$OUT" '"publish_wait_ms": 1500' "the policy carries it"
}

t_publish_udp() {
	local hp; hp=$(port udp)
	# The asker resends after 1 s without an answer (its first datagram may
	# beat the server's bind), and the server echoes every copy that came:
	# on a slow machine (the TCG guest) one ask can take several, so the
	# server echoes until it is killed, not for a fixed count.
	"$CL" run "$SC" $IN --publish "$hp:5353/udp" --timeout 120 -- python3 /peer.py udp_echo 5353 100000 &
	local pid=$!
	local a b; a=$(python3 "$PEER" udp_ask "$hp" one); b=$(python3 "$PEER" udp_ask "$hp" two)
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	assert_eq "echo:one" "$a" "UDP echo through --publish"
	assert_eq "echo:two" "$b" "second peer"
}

t_forward_out() {
	local hp; hp=$(port)
	python3 "$PEER" serve_sink "$hp" 2 &
	local srv=$!
	wait_listen "$hp" || fail "host server"   # the probe is the first of 2
	clr run "$SC" $IN --forward-out "3128:127.0.0.1:$hp" -- python3 /peer.py send_blob 3128 100000
	wait $srv
	assert_eq 0 "$RC" "inside client: $ERR"
	assert_eq "$(echo "$OUT" | sed -n 1p)" "$(echo "$OUT" | sed -n 2p)" "forwarded transfer"
}

t_host_unreachable_without_forward() {
	local hp; hp=$(port)
	python3 "$PEER" serve_sink "$hp" 2 & local srv=$!
	wait_listen "$hp" || fail "host server"   # the probe is the first of 2
	clr run "$SC" $IN --forward-out "3128:127.0.0.1:$hp" -- python3 /peer.py try_connect "$hp"
	python3 "$PEER" send_blob "$hp" 1 >/dev/null; wait $srv
	assert_eq refused "$OUT" "only the declared forward reaches the host"
}

t_relays_gone_after_exit_and_sigkill() {
	local hp; hp=$(port)
	clr run "$SC" --publish "$hp:80" -- true
	assert_eq 0 "$RC" "run"
	port_free "$hp" || fail "port $hp still bound after exit"
	# The command says when it runs; then the tree cloister started is
	# known, and exactly that tree must be gone after the SIGKILL.
	mkdir "$T_TMP/r"
	"$CL" run "$SC" "${RW_ID[@]}" --publish "$hp:80" --rw "$T_TMP/r:/r" -- sh -c 'touch /r/ready; exec sleep 300' &
	local pid=$!
	wait_until test -e "$T_TMP/r/ready" || { kill -KILL $pid; fail "sandbox did not start"; }
	kill_tree_and_wait $pid
	# The listener was the supervisor's: it went with the process.
	port_free "$hp" || fail "port still bound after SIGKILL"
}

t_bad_input() {
	clr run "$SC" --publish 70000:80 -- true
	assert_eq 125 "$RC" "port out of range"
	assert_contains "$ERR" "--publish '70000:80'" "message"
	clr run "$SC" --publish 8080:80/sctp -- true
	assert_eq 125 "$RC" "bad protocol"
	clr run "$SC" --forward-out 80:127.0.0.1 -- true
	assert_eq 125 "$RC" "malformed forward"
	clr run "$SC" --network host --publish 8080:80 -- true
	assert_eq 125 "$RC" "publish needs own netns"
	local hp; hp=$(port)
	python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(30)' "$hp" &
	local busy=$!
	wait_listen "$hp" || fail "busy listener"
	clr run "$SC" --publish "$hp:80" -- touch /tmp/never
	kill $busy; wait $busy 2>/dev/null
	assert_eq 125 "$RC" "port in use"
	assert_contains "$ERR" "publishing 127.0.0.1:$hp: Address already in use" "message"
	assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line"
}

run_tests
