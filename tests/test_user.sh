#!/bin/bash
# The one way the unprivileged test user is made, shared by tests/run.sh,
# .ci/run and bench/run.sh:   tests/test_user.sh [NAME]
# NAME defaults to CLOISTER_TEST_USER or cloister-test. Exit 0 if the user
# exists (prints "created user NAME" when this call made it), 1 with one line
# on stderr if it does not and cannot be made (not root, useradd failed).
# Nothing else about the system is changed.
set -u
name=${1:-${CLOISTER_TEST_USER:-cloister-test}}
id "$name" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "test user '$name' does not exist and only root can create it (useradd -m $name)" >&2
	exit 1
fi
err=$(useradd -m -s /bin/bash "$name" 2>&1) || { echo "useradd $name failed: ${err:-no message}" >&2; exit 1; }
echo "created user $name"
