#!/bin/bash
# The supervisor under stress: the relay survives many short connections
# (and keeps supervising).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/relay_stress.bash"

t_relay_stress_then_sigterm_and_timeout() {
	relay_stress_then_sigterm_and_timeout
}

run_tests
