#!/bin/bash
# Runtime resolution without a daemon (every user): the spec's and the
# flag's runtime, docker refused or falling back to native with the reason
# named, auto naming why each runtime was unusable, bad names refused.
. "$(dirname "$0")/docker_lib.bash"

t_spec_runtime_docker_without_daemon_records_the_fallback() {
	spec 'echo "{\"status\":\"finished\",\"outputs\":1}"' docker
	DOCKER_HOST=unix://$T_TMP/no.sock clr sandbox run --spec "$T_TMP/spec.json" --json
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_contains "$(event_types)" "SandboxRuntimeFallback" events
	assert_contains "$("$CL" events r1 --root "$T_TMP")" '"reason":"docker unavailable' "event reason"
}

t_explicit_docker_without_daemon_runs_native_with_warning() {
	DOCKER_HOST=unix://$T_TMP/no.sock clr run --runtime docker --json-status "$T_TMP/st.json" -- sh -c 'echo ran'
	assert_eq 0 "$RC" "exit ($ERR)"
	assert_eq ran "$OUT" output
	assert_contains "$ERR" "warning: --runtime docker" warning
	assert_eq native "$(py 'j["runtime"]' <"$T_TMP/st.json")" "status runtime"
	assert_contains "$(py 'j["runtime_fallback"]' <"$T_TMP/st.json")" "docker unavailable" "recorded fallback"
}

t_docker_publish_with_network_has_no_native_fallback() {
	DOCKER_HOST=unix://$T_TMP/no.sock clr run --runtime docker --network host --publish 127.0.0.1:18998:80 -- echo ran
	assert_eq 125 "$RC" exit
	assert_not_contains "$OUT" ran
	assert_contains "$ERR" "native cannot publish ports with the network allowed"
}

t_native_never_falls_back() {
	local out rc
	out=$(no_userns "$CL" run --runtime native -- echo ran 2>&1); rc=$?
	assert_eq 125 "$rc" "exit ($out)"
	assert_not_contains "$out" ran
	assert_contains "$out" "creating the sandbox namespaces" reason
}

t_auto_names_why_each_runtime_was_unusable() {
	local out rc
	out=$(DOCKER_HOST=unix://$T_TMP/no.sock no_userns "$CL" run -- echo ran 2>&1); rc=$?
	assert_eq 125 "$rc" "exit ($out)"
	assert_contains "$out" "no runtime can run this sandbox: native: creating the sandbox namespaces"
	assert_contains "$out" "; docker: connecting to the docker daemon at $T_TMP/no.sock"
	assert_contains "$out" "; codeplane: "
}

t_runtime_flag_rejects_unknown_names() {
	clr run --runtime podman -- true
	assert_eq 125 "$RC" exit
	assert_contains "$ERR" "--runtime 'podman': expected auto, native, docker or codeplane"
}

t_docker_host_other_than_unix_is_refused_by_name() {
	DOCKER_HOST=tcp://127.0.0.1:2375 clr run --runtime docker -- echo ran
	assert_eq 0 "$RC" "falls back to native ($ERR)"
	assert_contains "$ERR" "DOCKER_HOST=tcp://127.0.0.1:2375: only unix:// sockets are supported"
}

run_tests
