#!/bin/bash
# The supervisor under stress: the relay survives many short connections
# (and keeps supervising), and request ids past 4095.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/relay_stress.bash"

t_relay_stress_then_sigterm_and_timeout() {
	relay_stress_then_sigterm_and_timeout
}

# Ids once rode in the errno field, clamped at 4095: connection 4096 hung.
t_publish_more_than_4096_connections() {
	rs_start 600
	local n; n=$(python3 "$RPEER" sequential "$RS_HP" 4200)
	rs_kill
	assert_eq 4200 "$n" "sequential connections answered through one --publish"
}

run_tests
