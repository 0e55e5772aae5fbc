#!/bin/bash
# The codeplane executor against a real OpenSSH sshd on 127.0.0.1 (keys
# made here, key auth only) and tests/helpers/codeplane_double.py, a TEST
# DOUBLE of Codeplane's workspace API (documented routes, shapes, statuses,
# 429 with Retry-After), whose workspace is a local directory. Lifecycle,
# error mapping, retry, token redaction, resolution.
. "$(dirname "$0")/../lib.sh"

TOKEN=cpt-$RANDOM$RANDOM-secret-token
py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port_open() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null; }

# sshd on a free port with a host key and one client key of this test.
sshd_up() {
	local d=$T_TMP/ssh
	mkdir -p "$d"; chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host" || fail "ssh-keygen"
	ssh-keygen -q -t ed25519 -N '' -f "$d/client" || fail "ssh-keygen"
	cp "$d/client.pub" "$d/authorized_keys"; chmod 600 "$d/authorized_keys"
	SSH_PORT=$(free_port)
	cat >"$d/sshd_config" <<C
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $d/host
AuthorizedKeysFile $d/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PidFile $d/sshd.pid
${SSHD_EXTRA:-}
C
	is_root && mkdir -p /run/sshd
	/usr/sbin/sshd -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
	wait_until port_open "$SSH_PORT" || fail "sshd did not listen: $(tail -3 "$d/sshd.log")"
	echo "[127.0.0.1]:$SSH_PORT $(cut -d' ' -f1,2 "$d/host.pub")" >"$d/known_hosts"
}

# The double, configured with extra JSON members; exports the client env.
double_up() {  # [extra-json-members]
	local d=$T_TMP/cp
	mkdir -p "$d"
	cat >"$d/config.json" <<J
{"token":"$TOKEN","repo":"acme/app","ssh_port":$SSH_PORT,"ssh_user":"$(id -un)",
 "workdir":"$T_TMP/ws","result_dir":"$T_TMP/wsres"${1:+,$1}}
J
	python3 "$TOP/tests/helpers/codeplane_double.py" "$d" 2>"$d/double.log" &
	wait_until test -s "$d/port" || fail "the double did not start: $(cat "$d/double.log")"
	export CODEPLANE_API_URL=http://127.0.0.1:$(cat "$d/port") CODEPLANE_API_KEY=$TOKEN \
		CODEPLANE_REPO=acme/app CODEPLANE_WORKDIR=$T_TMP/ws CODEPLANE_RESULT_DIR=$T_TMP/wsres \
		CLOISTER_STATE_DIR=$T_TMP/state \
		CODEPLANE_SSH_IDENTITY=$T_TMP/ssh/client CODEPLANE_SSH_KNOWN_HOSTS=$T_TMP/ssh/known_hosts
}
requests() { cut -d' ' -f1,2 "$T_TMP/cp/requests.log" | sed -E 's/[0-9a-f-]{36}/ID/'; }
up() { sshd_up; double_up "$@"; }

t_lifecycle_create_poll_ssh_run_delete() {
	up
	clr run --runtime codeplane --env A=1 --json-status "$T_TMP/st.json" -- \
		sh -c 'pwd; echo "A=$A"; echo err >&2; exit 3'
	assert_eq 3 "$RC" "exit ($ERR)"
	assert_eq "$T_TMP/ws
A=1" "$OUT" "cwd is the workspace, the policy's env"
	assert_eq err "$ERR" stderr
	assert_eq codeplane "$(py 'j["runtime"]' <"$T_TMP/st.json")" runtime
	assert_eq "POST /api/repos/acme/app/workspaces
GET /api/repos/acme/app/workspaces/ID
GET /api/repos/acme/app/workspaces/ID
GET /api/repos/acme/app/workspaces/ID/ssh
DELETE /api/repos/acme/app/workspaces/ID" "$(requests)" "API calls in order"
	! grep -q 'auth=bad' "$T_TMP/cp/requests.log" || fail "a request without the token"
	grep -q '^POST .* ctype=application/json' "$T_TMP/cp/requests.log" || fail "JSON body without its content type"
	[ ! -e "$T_TMP/ws" ] || fail "workspace left after an ephemeral run"
}

t_only_the_policy_env_reaches_the_command() {
	up
	LEAK_ME=1 clr run --runtime codeplane --env A=1 -- env
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_not_contains "$OUT" LEAK_ME
	assert_not_contains "$OUT" SSH_CONNECTION "sshd's own variables"
	assert_contains "$OUT" "A=1"
}

t_sticky_suspends_instead_of_deleting() {
	up
	CODEPLANE_PERSISTENCE=sticky clr run --runtime codeplane -- true
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq "POST /api/repos/acme/app/workspaces/ID/suspend" "$(requests | tail -1)" "last call"
}

t_429_is_retried_after_retry_after() {
	up '"rate_limit_first":2'
	clr run --runtime codeplane -- echo ok
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq ok "$OUT"
	assert_eq "POST /api/repos/acme/app/workspaces
POST /api/repos/acme/app/workspaces
POST /api/repos/acme/app/workspaces" "$(requests | head -3)" "two 429s, then the create"
}

t_api_errors_are_125_with_the_message_and_no_token() {
	up '"fail_create":true'
	clr run --runtime codeplane -- echo ran
	assert_eq 125 "$RC" exit
	assert_not_contains "$OUT" ran
	assert_contains "$ERR" "codeplane: creating a workspace: HTTP 422: Validation Failed (Workspace.snapshot_id: invalid)"
	CODEPLANE_REPO=acme/other clr run --runtime codeplane -- true
	assert_eq 125 "$RC" "unknown repo"
	assert_contains "$ERR" "HTTP 404: Not Found (Repository.name: missing)"
	CODEPLANE_API_KEY=wrong-$TOKEN clr run --runtime codeplane -- true
	assert_eq 125 "$RC" "bad token"
	assert_contains "$ERR" "HTTP 401: Bad credentials"
	assert_not_contains "$ERR" "$TOKEN" "token in the error"
}

t_token_never_appears_in_errors_even_when_echoed() {
	up
	# An unreachable URL that contains the token: curl's message names it.
	CODEPLANE_API_URL="http://127.0.0.1:1/$TOKEN" clr run --runtime codeplane -- true
	assert_eq 125 "$RC" exit
	assert_contains "$ERR" "[redacted]"
	assert_not_contains "$ERR" "$TOKEN" "token in the error"
}

t_ssh_failure_is_125_not_the_command() {
	up
	: >"$T_TMP/ssh/known_hosts"   # host key unknown: ssh refuses
	clr run --runtime codeplane -- true
	assert_eq 125 "$RC" "exit ($ERR)"
	assert_contains "$ERR" "codeplane: ssh to workspace"
	assert_eq "DELETE /api/repos/acme/app/workspaces/ID" "$(requests | tail -1)" "deleted anyway"
}

t_timeout_ends_the_run_and_deletes_the_workspace() {
	up
	clr run --runtime codeplane --timeout 1 --json-status "$T_TMP/st.json" -- sleep 60
	assert_eq 124 "$RC" "exit ($ERR)"
	assert_eq True "$(py 'j["timed_out"]' <"$T_TMP/st.json")" timed_out
	assert_eq "DELETE /api/repos/acme/app/workspaces/ID" "$(requests | tail -1)" "deleted"
}

t_unsupported_policy_is_refused_before_any_workspace() {
	up
	clr run --runtime codeplane --memory 64m -- true
	assert_eq 125 "$RC" "--memory"
	assert_contains "$ERR" "cannot be applied by the codeplane executor"
	clr run --runtime codeplane --ro /etc:/data -- true
	assert_eq 125 "$RC" "bind"
	assert_contains "$ERR" "cannot bind /data"
	[ ! -s "$T_TMP/cp/requests.log" ] || fail "a workspace was requested: $(requests)"
}

t_check_reports_codeplane() {
	up
	clr check --json
	assert_eq 0 "$RC" "check ($ERR)"
	assert_eq "True configured for acme/app at $CODEPLANE_API_URL" \
		"$(py '" ".join(str(x) for p in j if p["name"]=="codeplane" for x in (p["ok"], p["detail"]))' <<<"$OUT")" codeplane
	assert_not_contains "$OUT" "$TOKEN" "token in check"
	env -u CODEPLANE_API_KEY "$CL" check | grep '^codeplane' >"$T_TMP/line"
	assert_contains "$(cat "$T_TMP/line")" "unavailable codeplane is not configured"
}

t_not_configured_is_named() {
	env -u CODEPLANE_API_KEY -u CODEPLANE_TOKEN CODEPLANE_REPO=a/b "$CL" run --runtime codeplane -- true 2>"$T_TMP/err"
	assert_eq 125 "$?" exit
	assert_contains "$(cat "$T_TMP/err")" "codeplane is not configured: set CODEPLANE_API_KEY"
}

t_auto_uses_codeplane_when_native_and_docker_cannot() {
	up
	local out rc
	out=$(DOCKER_HOST=unix://$T_TMP/no.sock unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh \
		"$CL" run --json-status fd:1 -- echo remote 2>"$T_TMP/err"); rc=$?
	# Inside the user namespace the caller is "root": the double's user
	# name is the outer one, which is what sshd checks.
	assert_eq 0 "$rc" "exit ($(cat "$T_TMP/err"))"
	assert_contains "$out" remote
	assert_contains "$out" '"runtime":"codeplane"'
	assert_contains "$out" '"runtime_fallback":"native unavailable'
}

# ---- sandbox specs on codeplane ----

# spec.json for `cloister sandbox run`: runtime codeplane, the request
# bundle $T_TMP/req (in.txt), extra JSON members.
cp_spec() {  # command [extra-json-members]
	mkdir -p "$T_TMP/req"; echo hello >"$T_TMP/req/in.txt"
	python3 - "$T_TMP" "$1" "${2:-}" >"$T_TMP/spec.json" <<'PY'
import json, sys
tmp, cmd, extra = sys.argv[1:4]
s = {"runId": "r1", "sandboxId": "s1", "rootDir": tmp, "command": cmd,
     "requestBundlePath": tmp + "/req", "runtime": "codeplane"}
if extra:
    s.update(json.loads("{" + extra + "}"))
print(json.dumps(s))
PY
}
SBX() { echo "$T_TMP/.smithers/sandboxes/r1/${1:-s1}"; }
row_status() {
	python3 -c 'import sqlite3,sys
r=sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute("select status from sandboxes where sandbox_id=?", (sys.argv[2],)).fetchone()
print(r[0] if r else "")' "$T_TMP/.smithers/cloister.db" "${1:-s1}"
}
# The remote side may leave read-only trees (the request) behind.
unlock() { chmod -R u+w "$T_TMP/ws" "$T_TMP/wsres" 2>/dev/null; true; }

# The runner: checks its request (read-only), writes a bundle into the
# result dir and names it in the protocol's result file.
RUNNER='set -e; test "$(cat in.txt)" = hello; test -s .smithers/sandbox-request.json
stat -c %A in.txt .smithers | tr "\n" " " >"$CLOISTER_RESULT_DIR/modes"
mkdir -p "$CLOISTER_RESULT_DIR/logs"; echo "{\"line\":1}" >"$CLOISTER_RESULT_DIR/logs/stream.ndjson"
printf "%s" "{\"status\":\"finished\",\"outputs\":{\"answer\":42}}" >"$CLOISTER_RESULT_DIR/README.md"
echo "{\"bundlePath\":\"/result\"}" >"$SMITHERS_SANDBOX_RESULT_PATH"; echo ran-remote'

t_spec_round_trip_ships_request_and_collects_the_bundle() {
	up
	cp_spec "$RUNNER; test -s long/\$(printf %0120d 0); test -s $(printf 'd%.0s/' $(seq 60))g"
	# Names past ustar's 100 bytes: a file name over 100 (a GNU long-name
	# record) and a deep path (ustar's prefix field).
	mkdir -p "$T_TMP/req/long" "$T_TMP/req/$(printf 'd%.0s/' $(seq 60))"
	echo x >"$T_TMP/req/long/$(printf %0120d 0)"; echo y >"$T_TMP/req/$(printf 'd%.0s/' $(seq 60))g"
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq "$(SBX)/result" "$(py 'j["bundlePath"]' <<<"$OUT")" "bundlePath is the local result dir"
	assert_eq "$(grep -oE '[0-9a-f-]{36}' "$T_TMP/cp/requests.log" | head -1)" "$(py 'j["workspaceId"]' <<<"$OUT")" \
		"workspaceId is the Codeplane workspace's id"
	assert_eq "-r--r--r-- dr-xr-xr-x " "$(cat "$(SBX)/result/modes")" "the remote request is read-only"
	assert_eq '{"line":1}' "$(cat "$(SBX)/result/logs/stream.ndjson")" "collected bundle file"
	clr bundle validate "$(SBX)/result" --json
	assert_eq 0 "$RC" "collected bundle validates ($ERR)"
	assert_eq "finished 42" "$(py 'j["status"]+" "+str(j["bundleSizeBytes"]>0 and 42)' <<<"$OUT")" "bundle status"
	assert_eq finished "$(row_status)" "sandbox row"
	assert_eq "POST /api/repos/acme/app/workspaces
GET /api/repos/acme/app/workspaces/ID
GET /api/repos/acme/app/workspaces/ID
GET /api/repos/acme/app/workspaces/ID/ssh
DELETE /api/repos/acme/app/workspaces/ID" "$(requests)" "API calls"
	[ ! -e "$T_TMP/ws" ] || fail "remote workspace left"
}

t_spec_inline_status_and_runtime_option() {
	up
	# The spec asks for native; --runtime codeplane overrides it. The
	# runner prints an inline result on stdout.
	cp_spec 'echo "{\"status\":\"finished\",\"outputs\":{\"where\":\"$(pwd)\"}}"' '"runtime":"native"'
	clr sandbox run --spec "$T_TMP/spec.json" --json --runtime codeplane
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq "finished $T_TMP/ws" "$(py 'j["status"]+" "+j["output"]["where"]' <<<"$OUT")" "ran in the remote workspace"
	assert_eq codeplane "$(py 'j["execution"]["runtime"]' <<<"$OUT")" "execution runtime"
	clr sandbox run --spec "$T_TMP/spec.json" --json --runtime nowhere
	assert_eq 125 "$RC" "unknown --runtime"
	assert_contains "$ERR" "Unsupported sandbox runtime: nowhere"
}

t_spec_output_cap_and_events_as_native() {
	up
	cp_spec 'head -c 5000 /dev/zero | tr "\\0" x; echo "{\"status\":\"finished\"}" >"$SMITHERS_SANDBOX_RESULT_PATH"' '"maxOutputBytes":1000'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq "True 1000" "$(py 'str(j["execution"]["output_truncated"])+" "+str(j["execution"]["stdout"].count("x"))' <<<"$OUT")" \
		"stdout capped at maxOutputBytes"
	assert_contains "$(py 'j["execution"]["stdout"]' <<<"$OUT")" "[truncated 4000 bytes]"
	clr events r1 --root "$T_TMP"
	assert_eq "SandboxCreated SandboxShipped SandboxHeartbeat SandboxBundleReceived SandboxCompleted" \
		"$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in sys.stdin))')" events
}

t_spec_unsupported_members_are_refused_before_any_workspace() {
	up
	local extra
	for extra in '"ports":[{"host":8080,"container":80}],"allowNetwork":true' \
		'"ports":[{"host":8080,"container":80}]' '"memoryLimit":"64m"' \
		"\"volumes\":[{\"host\":\"$T_TMP\",\"container\":\"/data\"}]"; do
		cp_spec 'echo "{\"status\":\"finished\"}"' "$extra"
		clr sandbox run --spec "$T_TMP/spec.json" --json
		assert_eq 1 "$([ "$RC" != 0 ] && echo 1)" "refused: $extra ($RC)"
		assert_contains "$ERR" '"code":' "a JSON error for $extra"
	done
	[ ! -s "$T_TMP/cp/requests.log" ] || fail "a workspace was requested: $(requests)"
}

# A remote whose tar sends MODE's archive instead of the result.
hostile() {  # mode
	mkdir -p "$T_TMP/evil"
	printf '#!/bin/sh\nexec python3 %s "$@"\n' "$TOP/tests/helpers/hostile_tar.py" >"$T_TMP/evil/tar"
	chmod 755 "$T_TMP/evil/tar"
	SSHD_EXTRA="SetEnv PATH=$T_TMP/evil:/usr/local/bin:/usr/bin:/bin HOSTILE_TAR_MODE=$1 HOSTILE_TAR_ABS=$T_TMP/abs-escaped" up
	cp_spec "echo remote-ran >\"\$CLOISTER_RESULT_DIR/README.md\""
	clr sandbox run --spec "$T_TMP/spec.json" --json
	unlock
}
# Refused: the code and message; result/ left empty; the row failed; the
# workspace deleted.
refused() {  # code message
	assert_eq 1 "$([ "$RC" != 0 ] && echo 1)" "a refused stream fails the run ($RC)"
	assert_eq "$1" "$(py 'j["code"]' <<<"$ERR")" "error code ($ERR)"
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "$2"
	assert_eq "" "$(ls -A "$(SBX)/result")" "result dir emptied"
	assert_eq failed "$(row_status)" "sandbox row"
	assert_eq "DELETE /api/repos/acme/app/workspaces/ID" "$(requests | tail -1)" "workspace deleted"
}

t_spec_hostile_stream_dotdot_is_refused() {
	hostile dotdot
	refused TOOL_PATH_ESCAPE "'./../x' is absolute or climbs out"
	[ ! -e "$(SBX)/x" ] && [ ! -e "$T_TMP/.smithers/sandboxes/r1/x" ] || fail "../x written"
}

t_spec_hostile_stream_absolute_is_refused() {
	hostile absolute
	refused TOOL_PATH_ESCAPE "'$T_TMP/abs-escaped' is absolute"
	[ ! -e "$T_TMP/abs-escaped" ] || fail "absolute member written"
}

t_spec_hostile_stream_symlink_is_refused() {
	local before; before=$(sha256sum /etc/passwd)
	hostile symlink
	refused TOOL_PATH_ESCAPE "'./lnk' is a symbolic link"
	assert_eq "$before" "$(sha256sum /etc/passwd)" "/etc/passwd untouched"
}

t_spec_hostile_stream_oversized_is_refused() {
	hostile oversized
	refused SANDBOX_EXECUTION_FAILED "'./big' would take the bundle over 104857600 bytes"
}

t_spec_hostile_stream_garbage_is_refused() {
	hostile garbage
	refused SANDBOX_EXECUTION_FAILED "not a ustar header"
}

t_spec_timeout_fails_and_deletes_the_workspace() {
	up
	cp_spec 'sleep 60' '"toolTimeoutMs":1000'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 124 "$RC" "exit ($ERR)"
	assert_eq "failed timeout" "$(py 'j["status"]+" "+j["reason"]' <<<"$OUT")" result
	assert_eq "DELETE /api/repos/acme/app/workspaces/ID" "$(requests | tail -1)" "workspace deleted"
	[ ! -e "$T_TMP/ws" ] || fail "remote workspace left"
}

t_spec_cancel_deletes_the_workspace() {
	up
	cp_spec "touch $T_TMP/started; sleep 60"
	"$CL" sandbox run --spec "$T_TMP/spec.json" --json >"$T_TMP/out" 2>"$T_TMP/err" &
	local pid=$!
	wait_until test -e "$T_TMP/started" || fail "the remote command never started ($(cat "$T_TMP/err"))"
	kill -TERM $pid
	wait $pid
	assert_eq 143 "$?" "exit of a cancelled run ($(cat "$T_TMP/err"))"
	assert_eq "DELETE /api/repos/acme/app/workspaces/ID" "$(requests | tail -1)" "workspace deleted"
}

t_spec_sticky_workspace_is_suspended_then_resumed() {
	up
	cp_spec 'echo "{\"status\":\"finished\"}"' '"workspace":{"name":"keep-me","persistence":"sticky"}'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "first run ($ERR)"
	assert_eq "POST /api/repos/acme/app/workspaces/ID/suspend" "$(requests | tail -1)" "suspended"
	local id; id=$(cut -d' ' -f2 "$T_TMP/cp/requests.log" | grep -oE '[0-9a-f-]{36}' | head -1)
	assert_eq "$id" "$(cat "$T_TMP/state/codeplane/acme@app@keep-me")" "id recorded in the state dir"
	: >"$T_TMP/cp/requests.log"
	cp_spec 'echo "{\"status\":\"finished\"}"' '"sandboxId":"s2","workspace":{"name":"keep-me","persistence":"sticky"}'
	clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "second run ($ERR)"
	assert_eq "GET /api/repos/acme/app/workspaces/$id
POST /api/repos/acme/app/workspaces/$id/resume
GET /api/repos/acme/app/workspaces/$id
GET /api/repos/acme/app/workspaces/$id
GET /api/repos/acme/app/workspaces/$id/ssh
POST /api/repos/acme/app/workspaces/$id/suspend" "$(cut -d' ' -f1,2 "$T_TMP/cp/requests.log")" "resumed, no second create"
	unlock
}

t_sticky_record_is_untrusted() {
	up
	mkdir -p "$T_TMP/state/codeplane"
	# A record naming a workspace that does not exist, and one with a
	# hostile id: both end in a fresh create, never in a request for them.
	echo "no-such-id" >"$T_TMP/state/codeplane/acme@app@w1"
	CODEPLANE_PERSISTENCE=sticky CODEPLANE_WORKSPACE_NAME=w1 clr run --runtime codeplane -- true
	assert_eq 0 "$RC" "stale record ($ERR)"
	assert_eq "GET /api/repos/acme/app/workspaces/no-such-id
POST /api/repos/acme/app/workspaces" "$(requests | head -2)" "stale id: looked up, then created"
	: >"$T_TMP/cp/requests.log"
	printf '../../x?y\n' >"$T_TMP/state/codeplane/acme@app@w2"
	CODEPLANE_PERSISTENCE=sticky CODEPLANE_WORKSPACE_NAME=w2 clr run --runtime codeplane -- true
	assert_eq 0 "$RC" "hostile record ($ERR)"
	assert_eq "POST /api/repos/acme/app/workspaces" "$(requests | head -1)" "hostile id never used"
	grep -qE '^[0-9a-f-]{36}$' "$T_TMP/state/codeplane/acme@app@w2" || fail "record not replaced: $(cat "$T_TMP/state/codeplane/acme@app@w2")"
	# One run per name: a held lock refuses the run before any request.
	: >"$T_TMP/cp/requests.log"
	exec 9>"$T_TMP/state/codeplane/acme@app@w2.lock"
	flock 9
	CODEPLANE_PERSISTENCE=sticky CODEPLANE_WORKSPACE_NAME=w2 clr run --runtime codeplane -- true
	exec 9>&-
	assert_eq 125 "$RC" "name in use"
	assert_contains "$ERR" "sticky workspace w2 is in use by another run"
	[ ! -s "$T_TMP/cp/requests.log" ] || fail "a request while the name was locked: $(requests)"
	CODEPLANE_WORKSPACE_NAME=-bad clr run --runtime codeplane -- true
	assert_eq 125 "$RC" "bad name"
	assert_contains "$ERR" "workspace name '-bad'"
}

run_tests
