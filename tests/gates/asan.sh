#!/bin/bash
# The relay stress of supervisor.sh again, against build-asan/cloister
# (`make asan`; `make check` builds it): a use-after-free or undefined
# behaviour in the supervisor fails the test even when it happens not to
# change what the run does.
source "$(dirname "$0")/../lib.sh"
ASAN_CL=${CLOISTER_ASAN:-$TOP/build-asan/cloister}
CL=$ASAN_CL
source "$(dirname "$0")/../integration/relay_stress.bash"
# Leaks are not what this looks for (the supervisor exits without freeing).
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

t_relay_stress_under_asan() {
	[ -x "$ASAN_CL" ] || skip "no $ASAN_CL: run \`make asan\`"
	relay_stress_then_sigterm_and_timeout
}

run_tests
