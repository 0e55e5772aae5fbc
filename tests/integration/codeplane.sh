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
 "workdir":"$T_TMP/ws"${1:+,$1}}
J
	python3 "$TOP/tests/helpers/codeplane_double.py" "$d" 2>"$d/double.log" &
	wait_until test -s "$d/port" || fail "the double did not start: $(cat "$d/double.log")"
	export CODEPLANE_API_URL=http://127.0.0.1:$(cat "$d/port") CODEPLANE_API_KEY=$TOKEN \
		CODEPLANE_REPO=acme/app CODEPLANE_WORKDIR=$T_TMP/ws \
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

run_tests
