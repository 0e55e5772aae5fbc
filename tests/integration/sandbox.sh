#!/bin/bash
# `cloister sandbox run`, `bundle validate`, `ps` and `events`: the Smithers
# lifecycle end to end, each validation rule class, hostile request and
# result bundles, limits, secrets, concurrency and crash reconciliation.
. "$(dirname "$0")/../lib.sh"

# jq-like field access without jq: py 'expr over j' < json
py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }

# Writes spec.json with the given extra JSON members (may be empty).
spec() {  # command [extra-json-members]
	local cmd=$1 extra=${2:-}
	mkdir -p "$T_TMP/req"
	python3 - "$T_TMP" "$cmd" "$extra" >"$T_TMP/spec.json" <<'PY'
import json, sys
tmp, cmd, extra = sys.argv[1:4]
s = {"runId": "r1", "sandboxId": "s1", "rootDir": tmp, "command": cmd,
     "requestBundlePath": tmp + "/req"}
if extra:
    s.update(json.loads("{" + extra + "}"))
print(json.dumps(s))
PY
}
run_spec() { clr sandbox run --spec "$T_TMP/spec.json" --json "$@"; }
# The status of sandbox r1/s1 in the state database, read without cloister
# (whose readers reconcile first); "" while there is no row.
row_status() {
	python3 -c 'import sqlite3,sys
try: r=sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute("select status from sandboxes where sandbox_id=?", ("s1",)).fetchone()
except sqlite3.Error: r=None
print(r[0] if r else "")' "$T_TMP/.smithers/cloister.db" 2>/dev/null
}
row_status_is() { [ "$(row_status)" = "$1" ]; }
SBX() { echo "$T_TMP/.smithers/sandboxes/${1:-r1}/${2:-s1}"; }
ok_result='echo "{\"status\":\"finished\",\"outputs\":{\"answer\":42,\"list\":[1,2]}}"'

t_happy_path_round_trips_outputs() {
	mkdir -p "$T_TMP/req"; echo hello >"$T_TMP/req/in.txt"
	spec "test \"\$(cat in.txt)\" = hello || exit 9; $ok_result"
	run_spec
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq "finished" "$(py 'j["status"]' <<<"$OUT")" status
	assert_eq "42 [1, 2]" "$(py 'str(j["output"]["answer"]) + " " + str(j["output"]["list"])' <<<"$OUT")" outputs
	assert_eq "s1 s1 s1" "$(py 'j["remoteRunId"]+" "+j["workspaceId"]+" "+j["containerId"]' <<<"$OUT")" ids
	assert_not_contains "$OUT" '"bundlePath"'
	# cleanup: only result/ is left
	assert_eq "result" "$(ls "$(SBX)")" "left after cleanup"
	clr bundle validate "$(SBX)/result" --json
	assert_eq 0 "$RC" "result bundle valid ($ERR)"
}

t_events_and_ps_record_the_lifecycle() {
	spec "$ok_result"
	run_spec
	assert_eq 0 "$RC" "run ($ERR)"
	clr events r1 --root "$T_TMP"
	assert_eq "SandboxCreated SandboxShipped SandboxHeartbeat SandboxBundleReceived SandboxCompleted" \
		"$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in sys.stdin))')" events
	assert_eq "1 2 3 4 5" "$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin))')" seq
	(cd "$T_TMP" && "$CL" ps --json) >"$T_TMP/ps.json" || fail "ps failed"
	assert_eq "finished" "$(py 'j[0]["status"]' <"$T_TMP/ps.json")" "ps status"
}

t_result_file_and_request_file() {
	spec 'r=$(cat "$SMITHERS_SANDBOX_REQUEST_PATH"); case $r in *\"runId\":\"r1\"*) ;; *) exit 7;; esac; echo "{\"status\":\"failed\",\"outputs\":\"via-file\"}" >"$SMITHERS_SANDBOX_RESULT_PATH"; echo not json here' \
		'"input":{"q":1}'
	run_spec
	assert_eq 1 "$RC" "failed status exits 1 ($ERR)"
	assert_eq "failed via-file" "$(py 'j["status"]+" "+j["output"]' <<<"$OUT")" "result from the file"
}

t_cancelled_status() {
	spec 'echo "{\"status\":\"cancelled\"}"'
	run_spec
	assert_eq 1 "$RC" "exit ($ERR)"
	assert_eq cancelled "$(py 'j["status"]' <<<"$OUT")" status
}

t_only_spec_env_and_no_network() {
	spec 'echo "{\"status\":\"finished\",\"outputs\":{\"env\":\"$(env | sort | tr "\n" " ")\",\"ifs\":\"$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")\",\"cwd\":\"$(pwd)\"}}"' \
		'"env":{"ONLY":"this"}'
	HOSTVAR=leak run_spec
	assert_eq 0 "$RC" "run ($ERR)"
	env=$(py 'j["output"]["env"]' <<<"$OUT")
	assert_contains "$env" "ONLY=this"
	assert_contains "$env" "PATH=/usr/local/bin:/usr/bin:/bin"
	assert_not_contains "$env" "HOSTVAR"
	assert_eq "lo " "$(py 'j["output"]["ifs"]' <<<"$OUT")" "interfaces without allowNetwork"
	assert_eq "/workspace" "$(py 'j["output"]["cwd"]' <<<"$OUT")" cwd
}

t_workspace_read_only_result_writable() {
	spec 'touch /workspace/x 2>/dev/null && exit 5; echo data >/result/extra.txt || exit 6; echo "{\"status\":\"finished\"}"'
	run_spec
	assert_eq 0 "$RC" "run ($OUT $ERR)"
	assert_eq data "$(cat "$(SBX)/result/extra.txt")" "file written to /result"
}

t_dry_run_policy() {
	spec true '"allowNetwork":true,"memoryLimit":"64m","cpuLimit":"0.5","toolTimeoutMs":1500,"volumes":[{"host":"/usr","container":"/data"}]'
	clr sandbox run --spec "$T_TMP/spec.json" --dry-run
	assert_eq 0 "$RC" "dry run ($ERR)"
	assert_contains "$OUT" '"timeout_ms":1500'
	assert_contains "$OUT" '"/data"'
	assert_contains "$OUT" '"/workspace"'
	assert_contains "$OUT" "67108864"
	[ ! -e "$T_TMP/.smithers/sandboxes" ] || fail "dry run created directories"
}

# code|message fragment|extra spec members (runId etc. replaced when given)
INVALID_CASES=(
	'INVALID_INPUT|Unknown sandbox spec field: bogus.|"bogus":1'
	'INVALID_INPUT|runId must be a non-empty string.|"runId":""'
	'INVALID_INPUT|runId must be at most 256 characters.|"runId":"'"$(printf 'a%.0s' $(seq 257))"'"'
	'INVALID_INPUT|sandboxId must not contain|"sandboxId":"../x"'
	'INVALID_INPUT|rootDir must be an absolute path.|"rootDir":"rel/dir"'
	'INVALID_INPUT|Sandbox env keys must be valid environment variable names.|"env":{"1BAD":"x"}'
	'INVALID_INPUT|Sandbox env values must be strings.|"env":{"A":1}'
	'INVALID_INPUT|Sandbox env entry is outside supported bounds.|"env":{"A":"a\u0000b"}'
	'INVALID_INPUT|ports[0].host must be an integer port between 1 and 65535.|"ports":[{"host":0,"container":80}]'
	'INVALID_INPUT|ports[0].container must be an integer port between 1 and 65535.|"ports":[{"host":8080,"container":70000}]'
	'INVALID_INPUT|volumes[0].host must be an absolute path.|"volumes":[{"host":"rel","container":"/d"}]'
	'INVALID_INPUT|Sandbox volumes may not override /workspace or /result.|"volumes":[{"host":"/tmp","container":"/workspace"}]'
	'INVALID_INPUT|Sandbox volumes may not override /workspace or /result.|"volumes":[{"host":"/tmp","container":"/result/sub"}]'
	'INVALID_INPUT|Sandbox volumes may not override /workspace or /result.|"volumes":[{"host":"/tmp","container":"/x/../workspace"}]'
	'INVALID_INPUT|memoryLimit is not a supported sandbox resource limit.|"memoryLimit":"512x"'
	'INVALID_INPUT|memoryLimit is not a supported sandbox resource limit.|"memoryLimit":"0"'
	'INVALID_INPUT|cpuLimit is not a supported sandbox resource limit.|"cpuLimit":"01"'
	'INVALID_INPUT|Sandbox workspace must include a non-empty name.|"workspace":{"name":"  "}'
	'INVALID_INPUT|Sandbox workspace persistence must be ephemeral or sticky.|"workspace":{"name":"w","persistence":"forever"}'
	'INVALID_INPUT|Sandbox workspace idleTimeoutSecs must be a non-negative number.|"workspace":{"name":"w","idleTimeoutSecs":-1}'
	'INVALID_INPUT|Sandbox egress must use either caCertPem or caCertPath, not both.|"egress":{"caCertPem":"x","caCertPath":"/y"}'
	'INVALID_INPUT|egress.env keys must be valid environment variable names.|"egress":{"env":{"a-b":"x"}}'
	'INVALID_INPUT|egress.noProxy must be a string or string array.|"egress":{"noProxy":5}'
	'INVALID_INPUT|Unsupported sandbox runtime: nope|"runtime":"nope"'
	'INVALID_INPUT|allowNetwork must be a boolean.|"allowNetwork":"yes"'
	'INVALID_INPUT|toolTimeoutMs must be a positive integer.|"toolTimeoutMs":0'
)

t_every_validation_rule() {
	local c code msg extra
	for c in "${INVALID_CASES[@]}"; do
		code=${c%%|*}; c=${c#*|}; msg=${c%%|*}; extra=${c#*|}
		spec true "$extra" 2>/dev/null || fail "bad test row $extra"
		run_spec
		assert_eq 125 "$RC" "exit for $extra"
		assert_eq "$code" "$(py 'j["code"]' <<<"$ERR")" "code for $extra"
		assert_contains "$(py 'j["message"]' <<<"$ERR")" "$msg" "message for $extra"
		[ -z "$OUT" ] || fail "stdout not empty for $extra: $OUT"
	done
	printf '{"runId": ' >"$T_TMP/spec.json"
	run_spec
	assert_eq INVALID_INPUT "$(py 'j["code"]' <<<"$ERR")" "broken JSON"
}

# A result that cannot be written out is a failure, not a silent exit 0.
t_result_write_failure_is_reported() {
	spec "$ok_result"
	"$CL" sandbox run --spec "$T_TMP/spec.json" --json >/dev/full 2>"$T_TMP/err"
	assert_eq 1 "$?" "exit code with stdout on /dev/full"
	assert_eq '{"code":"SANDBOX_EXECUTION_FAILED","message":"writing the result JSON to stdout: No space left on device","details":{}}' \
		"$(cat "$T_TMP/err")" "the error"
	assert_eq finished "$(row_status)" "the run itself is recorded as it ended"
}

t_readable_error_without_json() {
	spec true '"runId":""'
	clr sandbox run --spec "$T_TMP/spec.json"
	assert_eq 125 "$RC" exit
	assert_eq "cloister: INVALID_INPUT: runId must be a non-empty string." "$ERR" "one readable line"
}

t_ship_refuses_symlinks_and_special_files() {
	spec true
	ln -s /etc/passwd "$T_TMP/req/link"
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "symlink ($ERR)"
	rm "$T_TMP/req/link"; rm -rf "$T_TMP/.smithers"
	mkfifo "$T_TMP/req/fifo"
	run_spec
	assert_eq TOOL_PATH_INVALID "$(py 'j["code"]' <<<"$ERR")" "fifo ($ERR)"
	rm "$T_TMP/req/fifo"; rm -rf "$T_TMP/.smithers"
	mkdir -p "$T_TMP/real"; ln -s "$T_TMP/real" "$T_TMP/reqlink"
	spec true "\"requestBundlePath\":\"$T_TMP/reqlink\""
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "symlinked bundle root ($ERR)"
}

# A runner names a bundle or a stream log through a symlink it planted in
# /result that points at a host directory: neither may be followed (every
# component is checked, not only the last).
t_result_paths_through_planted_links_refused() {
	mkdir -p "$T_TMP/hostb/inner" "$T_TMP/hostlog"
	echo '{"status":"finished","outputs":{"from":"host"}}' >"$T_TMP/hostb/inner/README.md"
	echo HOST-SECRET >"$T_TMP/hostlog/secret.txt"
	spec "ln -s $T_TMP/hostb /result/lnk; echo '{\"bundlePath\":\"/result/lnk/inner\"}'"
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "bundlePath through a link ($ERR; $OUT)"
	rm -rf "$T_TMP/.smithers"
	spec "ln -s $T_TMP/hostlog /result/lnk; echo '{\"status\":\"finished\",\"streamLogPath\":\"/result/lnk/secret.txt\"}'"
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "streamLogPath through a link ($ERR; $OUT)"
	! grep -rqs HOST-SECRET "$T_TMP/.smithers" || fail "the host file was copied into the result"
}

# The command never ends by itself (its gate opens only after the run):
# only toolTimeoutMs can end the run, no wall clock decides.
t_timeout_kills_and_fails() {
	mkdir -p "$T_TMP/gate"
	spec 'while [ ! -e /gate/go ]; do sleep 0.05; done; echo "{\"status\":\"finished\"}"' \
		"\"toolTimeoutMs\":300,\"volumes\":[{\"host\":\"$T_TMP/gate\",\"container\":\"/gate\"}]"
	( run_spec; printf '%s' "$OUT" >"$T_TMP/out"; printf '%s' "$ERR" >"$T_TMP/err"; echo "$RC" >"$T_TMP/rc.tmp"
	  mv "$T_TMP/rc.tmp" "$T_TMP/rc" ) &
	wait_until test -e "$T_TMP/rc" || { touch "$T_TMP/gate/go"; wait; fail "toolTimeoutMs did not end the run"; }
	touch "$T_TMP/gate/go"; wait
	OUT=$(cat "$T_TMP/out"); ERR=$(cat "$T_TMP/err")
	assert_eq 124 "$(cat "$T_TMP/rc")" "exit ($ERR)"
	assert_eq "failed timeout True" "$(py 'j["status"]+" "+j["reason"]+" "+str(j["execution"]["timed_out"])' <<<"$OUT")" result
	assert_contains "$ERR" '"reason":"timeout"'
	(cd "$T_TMP" && "$CL" ps --json) | grep -q '"status":"failed"' || fail "row not failed"
}

t_output_cap_truncates() {
	spec 'head -c 100000 /dev/zero | tr "\0" x >&2; echo "{\"status\":\"finished\"}" >"$SMITHERS_SANDBOX_RESULT_PATH"' '"maxOutputBytes":100'
	run_spec
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq True "$(py 'j["execution"]["output_truncated"]' <<<"$OUT")" output_truncated
	assert_contains "$(py 'j["execution"]["stderr"]' <<<"$OUT")" "[truncated 99900 bytes]"
}

t_runner_result_errors() {
	spec 'echo oops >&2; exit 3'
	run_spec
	assert_eq SANDBOX_EXECUTION_FAILED "$(py 'j["code"]' <<<"$ERR")" "nonzero exit ($ERR)"
	assert_contains "$ERR" 'exited with code 3: oops'
	spec true '"sandboxId":"s2"'
	run_spec
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "Sandbox produced no result JSON"
	spec 'echo "{nope"' '"sandboxId":"s3"'
	run_spec
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "Sandbox produced invalid result JSON"
	spec 'echo "[1]" >"$SMITHERS_SANDBOX_RESULT_PATH"' '"sandboxId":"s4"'
	run_spec
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "Sandbox result JSON must be an object."
	spec 'echo "{\"status\":\"finished\",\"bundlePath\":\"/result\"}"' '"sandboxId":"s5"'
	run_spec
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "contains both bundlePath and status"
	spec 'echo "{\"outputs\":1}"' '"sandboxId":"s6"'
	run_spec
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "must include either bundlePath or status"
}

t_result_bundle_attacks_in_run() {
	spec 'ln -s /etc/passwd /result/README.md; echo "{\"bundlePath\":\"/result\"}"'
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "symlinked README ($ERR)"
	spec 'ln -s /etc /result/patches; echo "{\"status\":\"finished\",\"patches\":[{\"path\":\"patches/a.patch\",\"content\":\"x\"}]}"' '"sandboxId":"s2"'
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "symlinked patches dir ($ERR)"
	[ ! -e /etc/a.patch ] || fail "wrote through the symlink"
	spec 'echo "{\"status\":\"finished\",\"patches\":[{\"path\":\"patches/../../x.patch\",\"content\":\"x\"}]}"' '"sandboxId":"s3"'
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "escaping patch ($ERR)"
	spec 'echo "{\"bundlePath\":\"/etc\"}"' '"sandboxId":"s4"'
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "bundlePath outside /result ($ERR)"
	# (A link to a file outside /result cannot be made from inside: EXDEV
	# across mounts. A second name inside is refused all the same.)
	spec 'echo keep >/result/other; ln /result/other /result/README.md || exit 9; echo "{\"status\":\"finished\"}"' '"sandboxId":"s5"'
	run_spec
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "hard-linked README ($ERR)"
	assert_eq keep "$(cat "$(SBX r1 s5)/result/other")" "file behind the hard link untouched"
}

t_review_gate() {
	mkdir -p "$T_TMP/req"
	echo '{"status":"finished","patches":[{"path":"patches/a.patch","content":"+x\n-y\n"}]}' >"$T_TMP/req/res.json"
	spec 'cat res.json'
	run_spec
	assert_eq INVALID_INPUT "$(py 'j["code"]' <<<"$ERR")" "review required ($ERR)"
	assert_contains "$ERR" "require review approval"
	spec 'cat res.json' '"sandboxId":"s2","autoAcceptDiffs":true'
	run_spec
	assert_eq 0 "$RC" "auto accepted ($ERR)"
	assert_eq "patches/a.patch" "$(py 'j["patches"][0]' <<<"$OUT")" patches
	clr events r1 --root "$T_TMP"
	assert_contains "$OUT" '"totalDiffLines":2'
	assert_contains "$OUT" SandboxDiffRejected
	assert_contains "$OUT" SandboxDiffAccepted
}

# A bundle directory with a README.
mkbundle() {
	local def='{"status":"finished"}'
	mkdir -p "$T_TMP/b"; printf '%s' "${1-$def}" >"$T_TMP/b/README.md"
}
expect_bundle() {  # code message
	clr bundle validate "$T_TMP/b" --json
	assert_eq 125 "$RC" "exit for $2"
	assert_eq "$1" "$(py 'j["code"]' <<<"$ERR")" "code for $2 ($ERR)"
	assert_contains "$(py 'j["message"]' <<<"$ERR")" "$2"
	rm -rf "$T_TMP/b"
}

t_bundle_validate_attacks() {
	mkbundle; clr bundle validate "$T_TMP/b" --json
	assert_eq 0 "$RC" "valid bundle ($ERR)"
	assert_eq finished "$(py 'j["status"]' <<<"$OUT")" status
	rm -rf "$T_TMP/b"
	mkdir -p "$T_TMP/b"; echo '{"status":"finished"}' >"$T_TMP/real.md"; ln -s "$T_TMP/real.md" "$T_TMP/b/README.md"
	expect_bundle TOOL_PATH_ESCAPE "README.md may not be a symlink."
	mkdir -p "$T_TMP/b"; expect_bundle INVALID_INPUT "Sandbox bundle is missing README.md"
	mkbundle "   "; expect_bundle INVALID_INPUT "README.md is empty."
	mkbundle "not json"; expect_bundle INVALID_INPUT "README.md must contain valid JSON."
	mkbundle "[1,2]"; expect_bundle INVALID_INPUT "README.md JSON must be an object."
	mkbundle '{"outputs":1}'; expect_bundle INVALID_INPUT "must include status: finished | failed | cancelled."
	mkbundle; mkdir -p "$T_TMP/b/logs"; ln -s /etc/passwd "$T_TMP/b/logs/stream.ndjson"
	expect_bundle TOOL_PATH_ESCAPE "may not contain symlinks."
	mkbundle '{"status":"finished","patches":["patches/../../x.patch"]}'
	expect_bundle TOOL_PATH_ESCAPE "Path escapes sandbox root"
	mkbundle '{"status":"finished","patches":["../x.patch"]}'
	expect_bundle TOOL_PATH_ESCAPE "Path escapes sandbox root"
	mkbundle '{"status":"finished","patches":["other/x.patch"]}'
	expect_bundle TOOL_PATH_ESCAPE "Sandbox patch path escapes bundle root: other/x.patch"
	mkbundle; mkdir -p "$T_TMP/b/patches"; (cd "$T_TMP/b/patches" && for i in $(seq 1001); do : >"p$i.patch"; done)
	expect_bundle INVALID_INPUT "too many patch files (max 1000)."
	mkbundle; head -c $((5 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >>"$T_TMP/b/README.md"
	expect_bundle INVALID_INPUT "README.md exceeds 5242880 bytes"
	mkbundle; truncate -s $((100 * 1024 * 1024 + 1)) "$T_TMP/b/big.bin"
	expect_bundle INVALID_INPUT "Sandbox bundle exceeds 104857600 bytes"
	mkbundle "{\"status\":\"finished\",\"outputs\":$(printf '[%.0s' $(seq 17))$(printf ']%.0s' $(seq 17))}"
	expect_bundle INVALID_INPUT "maximum JSON depth of 16"
	mkbundle "{\"status\":\"finished\",\"outputs\":[$(seq -s, 513)]}"
	expect_bundle INVALID_INPUT "array longer than 512"
	mkbundle; ln -s "$T_TMP/b" "$T_TMP/blink"
	clr bundle validate "$T_TMP/blink" --json
	assert_eq TOOL_PATH_ESCAPE "$(py 'j["code"]' <<<"$ERR")" "symlinked bundle dir"
}

t_bundle_swapped_while_validating() {
	local i out=""
	mkdir -p "$T_TMP/b"
	echo '{"status":"finished","outputs":"from-the-link-target"}' >"$T_TMP/target.md"
	echo '{"status":"failed"}' >"$T_TMP/valid.md"
	cp "$T_TMP/valid.md" "$T_TMP/b/README.md"
	# Flip README.md between a file and a symlink as fast as possible.
	( while [ ! -e "$T_TMP/stop" ]; do
		ln -sfn "$T_TMP/target.md" "$T_TMP/b/.l" && mv -Tf "$T_TMP/b/.l" "$T_TMP/b/README.md"
		cp "$T_TMP/valid.md" "$T_TMP/b/.f" && mv -Tf "$T_TMP/b/.f" "$T_TMP/b/README.md"
	done ) &
	for i in $(seq 150); do
		out="$out$("$CL" bundle validate "$T_TMP/b" --json 2>&1)"
	done
	touch "$T_TMP/stop"; wait
	assert_not_contains "$out" "from-the-link-target" "validation followed a swapped-in symlink"
	mkfifo "$T_TMP/fifo.md"; rm -f "$T_TMP/b/README.md" "$T_TMP/b/.l" "$T_TMP/b/.f"
	mv "$T_TMP/fifo.md" "$T_TMP/b/README.md"
	clr bundle validate "$T_TMP/b" --json
	assert_contains "$ERR" "Sandbox bundle is missing README.md" "a fifo README (must not block)"
}

# Whether cloister can apply memory and CPU limits for this user here is
# what `cloister check` says; the outcome must be that one: an applied
# memoryLimit OOM-kills a command that touches more, a refused one fails
# before anything runs, naming the cgroup.
t_limits_applied_or_refused_clearly() {
	local can
	can=$("$CL" check --json | py '"yes" if any(c["name"] == "cgroups" and "--memory yes" in c["detail"] and "--cpus yes" in c["detail"] for c in j) else "no"')
	spec 'exec /h/cg_hog mem 200' \
		"\"memoryLimit\":\"64m\",\"cpuLimit\":\"0.5\",\"volumes\":[{\"host\":\"$HELPERS\",\"container\":\"/h\",\"readonly\":true}]"
	run_spec
	if [ "$can" = yes ]; then
		assert_eq SANDBOX_EXECUTION_FAILED "$(py 'j["code"]' <<<"$ERR")" "memoryLimit applied ($ERR)"
		assert_contains "$ERR" "exited with code 137" "the command touching 200 MiB under 64m"
	else
		assert_eq PROCESS_SPAWN_FAILED "$(py 'j["code"]' <<<"$ERR")" "refusal ($ERR)"
		assert_contains "$ERR" "cgroup"
		assert_not_contains "$(ls "$(SBX)/result")" README.md "nothing ran"
	fi
}

# Smithers' bundle limit (100 MiB in all) on the request copy: a file
# bigger than the limit is refused before it is copied, and so is a second
# file that takes the total over it. Nothing of the copy is left.
t_request_copy_size_capped() {
	local max=$((100 * 1024 * 1024))
	mkdir -p "$T_TMP/req"
	truncate -s $((max + 1)) "$T_TMP/req/big"
	spec "$ok_result"
	run_spec
	assert_eq 125 "$RC" "one file over the limit"
	assert_eq "INVALID_INPUT Sandbox bundle exceeds $max bytes $max" \
		"$(py 'j["code"]+" "+j["message"]+" "+str(j["details"]["maxBytes"])' <<<"$ERR")" "error ($ERR)"
	assert_eq result "$(ls "$(SBX)")" "left after the refused copy"
	rm "$T_TMP/req/big"
	truncate -s $((max / 2 + 1)) "$T_TMP/req/a" "$T_TMP/req/b"
	spec "$ok_result" '"sandboxId":"s2"'
	run_spec
	assert_eq 125 "$RC" "two files over the limit together"
	assert_contains "$ERR" "Sandbox bundle exceeds $max bytes"
	assert_eq result "$(ls "$(SBX r1 s2)")" "left after the second refused copy"
	rm "$T_TMP/req/b"
	spec "$ok_result" '"sandboxId":"s3"'
	run_spec
	assert_eq 0 "$RC" "half the limit is shipped ($ERR)"
}

# A teardown that fails (a probe makes tmp/ impossible to remove) is a
# warning: it does not turn a finished run into a failure.
t_failed_cleanup_is_a_warning() {
	local probe=$HELPERS/fail_rmdir_tmp.so
	# An LD_PRELOAD probe cannot go in front of an ASan build's runtime:
	# this behaviour is checked on the plain build (make check-asan too).
	local CL=${CLOISTER:-$TOP/build/cloister}   # CLOISTER: a mutant (make mutate)
	[ -f "$probe" ] || fail "missing $probe (make build/tests/fail_rmdir_tmp.so)"
	spec "$ok_result"
	LD_PRELOAD=$probe run_spec
	assert_eq 0 "$RC" "exit code ($ERR)"
	assert_eq finished "$(py 'j["status"]' <<<"$OUT")" status
	assert_contains "$ERR" "cloister: warning: sandbox s1: removing $(SBX)/tmp: Device or resource busy"
	assert_eq "result tmp" "$(echo $(ls "$(SBX)"))" "left after the failed cleanup"
	# gc removes what the run's own cleanup could not, once it can.
	(cd "$T_TMP" && "$CL" gc >/dev/null 2>"$T_TMP/gc.err") || fail "gc: $(cat "$T_TMP/gc.err")"
	assert_eq "result" "$(echo $(ls "$(SBX)"))" "left after gc"
	assert_eq finished "$(row_status)" "row after gc"
}

# Subdirectories are shipped whole, a link deep inside is still refused,
# and so is nesting deeper than 64 directories (in the request copy and
# in a result bundle's walk alike).
t_nested_request_and_bundle_depth() {
	local d="$T_TMP/req" i
	mkdir -p "$d/a/b/c"; echo deep >"$d/a/b/c/f"
	spec 'test "$(cat a/b/c/f)" = deep || exit 9; '"$ok_result"
	run_spec
	assert_eq 0 "$RC" "nested request ($ERR)"
	ln -s /etc/passwd "$d/a/b/c/link"
	spec true '"sandboxId":"s2"'
	run_spec
	assert_contains "$ERR" "may not contain symlinks: a/b/c/link" "a link three levels down ($ERR)"
	rm "$d/a/b/c/link"
	for i in $(seq 65); do d="$d/d"; done
	mkdir -p "$d"
	spec true '"sandboxId":"s3"'
	run_spec
	assert_contains "$ERR" "nested deeper than 64 directories" "65 levels ($ERR)"
	mkdir -p "$T_TMP/b"; echo '{"status":"finished"}' >"$T_TMP/b/README.md"
	d="$T_TMP/b"; for i in $(seq 64); do d="$d/d"; done
	mkdir -p "$d"
	clr bundle validate "$T_TMP/b" --json
	assert_eq 0 "$RC" "a bundle 64 levels deep ($ERR)"
	mkdir "$d/d"
	clr bundle validate "$T_TMP/b" --json
	assert_contains "$ERR" "nested deeper than 64 directories" "a bundle 65 levels deep"
}

t_no_request_bundle_gets_a_readme() {
	spec 'grep -q "\"status\": \"pending\"" README.md || exit 3; echo "{\"status\":\"finished\"}"' '"input":{"k":"v"}'
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); del s["requestBundlePath"]; json.dump(s, open(sys.argv[1], "w"))' "$T_TMP/spec.json"
	run_spec
	assert_eq 0 "$RC" "run ($ERR)"
}

t_secrets_never_written() {
	local secret=sekrit-$RANDOM-value proxy="http://user:pw-$RANDOM@127.0.0.1:3128"
	spec 'echo "token=$API_TOKEN egress=$EGRESS_KEY proxy=$HTTP_PROXY" >&2; exit 4' \
		"\"env\":{\"API_TOKEN\":\"$secret\"},\"egress\":{\"env\":{\"EGRESS_KEY\":\"e-$secret\"},\"httpProxy\":\"$proxy\",\"secretBindings\":{\"GH\":\"b-$secret\"}},\"config\":{\"apiKey\":\"c-$secret\"}"
	run_spec
	assert_eq SANDBOX_EXECUTION_FAILED "$(py 'j["code"]' <<<"$ERR")" "($ERR)"
	assert_contains "$ERR" "token=[redacted]"
	assert_not_contains "$OUT$ERR" "$secret"
	assert_not_contains "$OUT$ERR" "$proxy"
	if grep -rqa -e "$secret" -e "$proxy" "$T_TMP/.smithers"; then
		fail "secret found in: $(grep -rla -e "$secret" -e "$proxy" "$T_TMP/.smithers")"
	fi
	clr events r1 --root "$T_TMP"
	assert_contains "$OUT" "SandboxFailed"
	assert_not_contains "$OUT" "$secret"
}

t_egress_env_and_ca() {
	spec 'echo "{\"status\":\"finished\",\"outputs\":{\"p\":\"$HTTPS_PROXY $https_proxy $NO_PROXY\",\"ca\":\"$SSL_CERT_FILE\",\"pem\":\"$(cat $CURL_CA_BUNDLE)\"}}"' \
		'"allowNetwork":true,"egress":{"httpsProxy":"http://proxy:1","noProxy":["a","b"],"caCertPem":"PEMDATA"}'
	run_spec
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "[redacted] [redacted] a,b" "$(py 'j["output"]["p"]' <<<"$OUT")" "proxy env (proxy URLs are secrets)"
	assert_eq "/workspace/.smithers/egress/ca.crt PEMDATA" "$(py 'j["output"]["ca"]+" "+j["output"]["pem"]' <<<"$OUT")" ca
}

# A host HTTP proxy on loopback that answers every request with its line.
proxy_server() {  # port ready-file
	python3 - "$1" "$2" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("proxied " + self.path + " auth=" + str(self.headers.get("Proxy-Authorization") is not None)).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.timeout = 120
open(sys.argv[2], "w").close()
s.handle_request()
PY
}

t_egress_proxy_through_relay_without_network() {
	local port ready="$T_TMP/proxy.ready"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	proxy_server "$port" "$ready"
	wait_until test -e "$ready" || fail "proxy did not start"
	spec 'r=$(python3 -c "import urllib.request,json; print(json.dumps(urllib.request.urlopen(\"http://example.invalid/x\", timeout=60).read().decode()))") || exit 8; echo "{\"status\":\"finished\",\"outputs\":{\"r\":$r,\"p\":\"$http_proxy\"}}"' \
		"\"egress\":{\"httpProxy\":\"http://127.0.0.1:$port\"}"
	run_spec
	wait
	assert_eq 0 "$RC" "run ($ERR)"
	assert_eq "proxied http://example.invalid/x auth=False" "$(py 'j["output"]["r"]' <<<"$OUT")" "reply through the relay"
	clr sandbox run --spec "$T_TMP/spec.json" --dry-run
	assert_contains "$OUT" "\"forward_out\":[{\"sandbox_port\":$port,\"host\":\"127.0.0.1\""
}

t_progress_heartbeats() {
	spec "$ok_result"
	"$CL" sandbox run --spec "$T_TMP/spec.json" --progress-fd 3 3>"$T_TMP/progress" >/dev/null 2>&1 || fail "run failed"
	assert_eq "initializing:0 created:10 shipped:25 executing:40 child-finished:70 bundle-collected:85 completed:100" \
		"$(python3 -c 'import json,sys; print(" ".join("%s:%d" % (d["stage"], d["progress"]) for d in map(json.loads, open(sys.argv[1]))))' "$T_TMP/progress")" stages
}

t_progress_reader_gone_does_not_stop_the_run() {
	spec "$ok_result"
	# The progress pipe has no reader at all, before the first write.
	# (SIGPIPE back to its default: python ignores it, and exec keeps that.)
	python3 -c 'import os,signal,sys; signal.signal(signal.SIGPIPE, signal.SIG_DFL); r,w=os.pipe(); os.close(r); os.dup2(w,3); os.execvp(sys.argv[1], sys.argv[1:])' \
		"$CL" sandbox run --spec "$T_TMP/spec.json" --progress-fd 3 >"$T_TMP/out" 2>"$T_TMP/err"
	assert_eq 0 "$?" "exit ($(cat "$T_TMP/err"))"
	assert_eq finished "$(py 'j["status"]' <"$T_TMP/out")" status
}

t_nested_refused() {
	spec true
	CLOISTER_SANDBOX=outer/s0 run_spec
	assert_eq INVALID_INPUT "$(py 'j["code"]' <<<"$ERR")" "($ERR)"
	assert_contains "$ERR" "Nested <Sandbox> execution is disabled by default."
}

# At least N of the background runs (each writes $T_TMP/rcI) have ended.
runs_ended() { [ "$(cat "$T_TMP"/rc* 2>/dev/null | wc -l)" -ge "$1" ]; }
t_concurrency_limit_refuses_extra_runs() {
	local i
	mkdir -p "$T_TMP/gate" && chmod 777 "$T_TMP/gate"
	for i in $(seq 12); do
		spec 'while [ ! -e /gate/go ]; do sleep 0.05; done; echo "{\"status\":\"finished\"}"' \
			"\"sandboxId\":\"c$i\",\"volumes\":[{\"host\":\"$T_TMP/gate\",\"container\":\"/gate\"}]"
		cp "$T_TMP/spec.json" "$T_TMP/spec$i.json"
	done
	for i in $(seq 12); do
		( "$CL" sandbox run --spec "$T_TMP/spec$i.json" --json >"$T_TMP/out$i" 2>"$T_TMP/err$i"; echo $? >"$T_TMP/rc$i" ) &
	done
	# The two refused runs end on their own; the ten admitted wait for the gate.
	wait_until runs_ended 2 || { touch "$T_TMP/gate/go"; wait; fail "no run was refused"; }
	touch "$T_TMP/gate/go"
	wait
	assert_eq 2 "$(grep -l 'Sandbox concurrency limit reached for run r1 (10).' "$T_TMP"/err* | wc -l)" \
		"refused (stderr: $(cat "$T_TMP"/err* | cut -c1-300))"
	assert_eq 10 "$(grep -l '"status":"finished"' "$T_TMP"/out* | wc -l)" finished
	assert_eq 2 "$("$CL" events r1 --root "$T_TMP" | grep 'concurrency limit' | grep -c '"type":"SandboxFailed"')" "refusals recorded"
}

t_crash_is_reconciled() {
	local pid marker=$(marker crash)
	mkdir -p "$T_TMP/gate"
	spec ": $marker; while [ ! -e /gate/go ]; do sleep 0.05; done; echo '{\"status\":\"finished\"}'" \
		"\"volumes\":[{\"host\":\"$T_TMP/gate\",\"container\":\"/gate\"}]"
	"$CL" sandbox run --spec "$T_TMP/spec.json" >/dev/null 2>&1 &
	pid=$!
	wait_until row_status_is shipped || fail "no running row: $(row_status)"
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	assert_eq "request result tmp" "$(echo $(ls "$(SBX)"))" "left by the killed run"
	# The next run reconciles it: the row fails, its request/ and tmp/ go.
	spec "$ok_result" '"sandboxId":"s2"'
	run_spec
	assert_eq 0 "$RC" "next run ($ERR)"
	assert_eq result "$(ls "$(SBX)")" "the killed run's directory after the next run"
	assert_eq failed "$(row_status)" "after the crash"
	clr events r1 --root "$T_TMP"
	assert_contains "$OUT" "exited before it finished"
	# The sandbox dies with its cloister (the gate never opens).
	assert_gone "$marker"
}

# A final status and its final event are one transaction: when the event
# cannot be written (here a trigger refuses it), the row is not final
# either, so reconciliation still ends it with a SandboxFailed event, and
# no row is ever final without a SandboxCompleted/SandboxFailed event (the
# sandbox soak checks the same under SIGKILLs).
t_final_status_and_event_commit_together() {
	spec "$ok_result" '"sandboxId":"s0"'
	run_spec
	assert_eq 0 "$RC" "first run ($ERR)"
	python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create trigger no_completed before insert on events when new.type = '"'SandboxCompleted'"' begin select raise(abort, '"'refused by the test'"'); end"); c.commit()' \
		"$T_TMP/.smithers/cloister.db" || fail "adding the trigger"
	spec "$ok_result"
	run_spec
	assert_eq shipped "$(row_status)" "row when its final event could not be written"
	clr ps --json --root "$T_TMP"
	assert_eq 0 "$RC" "ps ($ERR)"
	assert_eq failed "$(row_status)" "row after the reconcile"
	clr events r1 --root "$T_TMP"
	assert_contains "$(grep '"sandboxId":"s1"' <<<"$OUT" | tail -1)" '"type":"SandboxFailed"'
}

t_gc_reconciles_crashed_runs() {
	local pid
	mkdir -p "$T_TMP/gate"
	spec 'while [ ! -e /gate/go ]; do sleep 0.05; done; echo "{\"status\":\"finished\"}"' \
		"\"volumes\":[{\"host\":\"$T_TMP/gate\",\"container\":\"/gate\"}]"
	"$CL" sandbox run --spec "$T_TMP/spec.json" >/dev/null 2>&1 &
	pid=$!
	wait_until row_status_is shipped || fail "no running row: $(row_status)"
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	assert_eq "request result tmp" "$(echo $(ls "$(SBX)"))" "left by the killed run"
	(cd "$T_TMP" && "$CL" gc >/dev/null 2>"$T_TMP/gc.err")
	assert_contains "$(cat "$T_TMP/gc.err")" "1 sandbox(es)"
	assert_eq failed "$(row_status)" "row after gc"
	assert_eq result "$(ls "$(SBX)")" "the killed run's directory after gc"
	touch "$T_TMP/gate/go"
}

t_cancel_by_sigterm_is_recorded_and_cleaned() {
	local pid rc
	mkdir -p "$T_TMP/gate"
	spec 'while [ ! -e /gate/go ]; do sleep 0.05; done; echo "{\"status\":\"finished\"}"' \
		"\"volumes\":[{\"host\":\"$T_TMP/gate\",\"container\":\"/gate\"}]"
	"$CL" sandbox run --spec "$T_TMP/spec.json" --json >"$T_TMP/out" 2>"$T_TMP/err" &
	pid=$!
	wait_until row_status_is shipped || { kill -KILL "$pid"; fail "no running row: $(row_status)"; }
	kill -TERM "$pid"; wait "$pid"; rc=$?
	touch "$T_TMP/gate/go"
	assert_eq 143 "$rc" "exit code"
	assert_contains "$(cat "$T_TMP/err")" '"reason":"cancelled"'
	assert_eq cancelled "$("$CL" ps --json --root "$T_TMP" | py 'j[0]["status"]')" "row"
	assert_eq result "$(ls "$(SBX)")" "cleaned up after the cancel"
}

t_sandbox_ids_are_used_once() {
	spec "$ok_result"
	run_spec
	assert_eq 0 "$RC" "first run ($ERR)"
	run_spec
	assert_eq 125 "$RC" "second run"
	assert_contains "$ERR" "Sandbox s1 already exists in run r1"
	assert_eq finished "$("$CL" ps --json --root "$T_TMP" | py 'j[0]["status"]')" "first row kept"
	rm "$T_TMP/.smithers/cloister.db"*
	run_spec
	assert_eq INVALID_INPUT "$(py 'j["code"]' <<<"$ERR")" "result/ left from the first run ($ERR)"
	assert_contains "$ERR" "already exists; use a new sandboxId"
}

t_ps_without_a_database_creates_nothing() {
	mkdir -p "$T_TMP/empty"
	(cd "$T_TMP/empty" && "$CL" ps --json) >"$T_TMP/ps" || fail "ps failed"
	assert_eq "[]" "$(cat "$T_TMP/ps")" "ps output"
	(cd "$T_TMP/empty" && "$CL" events r1) || fail "events failed"
	[ ! -e "$T_TMP/empty/.smithers" ] || fail "ps created .smithers"
}

t_spec_from_stdin() {
	spec "$ok_result"
	"$CL" sandbox run --spec - <"$T_TMP/spec.json" >"$T_TMP/out" 2>"$T_TMP/err" || fail "run: $(cat "$T_TMP/err")"
	assert_eq finished "$(py 'j["status"]' <"$T_TMP/out")" status
}

t_ports_published_without_network() {
	local hp code
	hp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	spec 'python3 -c "
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header(\"Content-Length\", \"2\"); self.end_headers(); self.wfile.write(b\"ok\")
    def log_message(self, *a): pass
s = http.server.HTTPServer((\"127.0.0.1\", 8000), H); s.timeout = 120; s.handle_request()
" && echo "{\"status\":\"finished\"}"' "\"ports\":[{\"host\":$hp,\"container\":8000}]"
	"$CL" sandbox run --spec "$T_TMP/spec.json" >"$T_TMP/out" 2>"$T_TMP/err" &
	code=$(python3 -c 'import urllib.request,sys,time
for i in range(600):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=10).read().decode()); break
    except Exception: time.sleep(0.1)' "$hp")
	wait
	assert_eq ok "$code" "HTTP through the published port"
	assert_eq finished "$(py 'j["status"]' <"$T_TMP/out")" "status ($(cat "$T_TMP/err"))"
}

run_tests
