#!/bin/bash
# Differential: bwrap's documented errors. Exit code 1 and the same first
# stderr line as Debian's bwrap for command-line errors; for setup errors
# the same exit code and a "bwrap: " line (wording is each one's own).
source "$(dirname "$0")/difflib.bash"

t_no_args_usage() { both_err; }
t_unknown_option() { both_err --foo true; }
t_unknown_short_option() { both_err --ro-bind / / -x true; }
t_missing_two_args() { both_err --bind /; }
t_missing_one_arg_chdir() { both_err --chdir; }
t_missing_one_arg_remount() { both_err --remount-ro; }
t_missing_an_arg_tmpfs() { both_err --tmpfs; }
t_missing_setenv_value() { both_err --setenv A; }
t_missing_chmod_arg() { both_err --chmod 0755; }
t_invalid_fd() { both_err --info-fd x true; }
t_invalid_args_fd() { both_err --args x; }
t_args_fd_closed() { both_err --args 99 true; }
t_invalid_uid() { both_err --unshare-user --uid x true; }
t_invalid_gid() { both_err --unshare-user --gid -1 true; }
t_uid_needs_userns() { both_err --uid 4242 true; }
t_gid_needs_userns() { both_err --gid 4242 true; }
t_hostname_needs_uts() { both_err --hostname x true; }
t_as_pid_1_needs_pidns() { both_err --ro-bind / / --as-pid-1 true; }
t_userns_block_fd_needs_userns() { both_err --userns-block-fd 5 true; }
t_userns_block_fd_needs_info_fd() { both_err --unshare-user --userns-block-fd 5 true; }
t_perms_bad_octal() { both_err --perms 999 --dir /x true; }
t_perms_not_followed_by_creation() { both_err --perms 0755 --bind / / true; }
t_perms_twice() { both_err --perms 0644 --perms 0600 --dir /x true; }
t_perms_at_end() { both_err --ro-bind / / --perms 0700; }
t_size_zero() { both_err --size 0 --tmpfs /x true; }
t_size_not_number() { both_err --size abc --tmpfs /x true; }
t_size_not_before_tmpfs() { both_err --size 10 --dir /x true; }
t_chmod_bad_octal() { both_err --chmod 99999 /x true; }
t_unknown_cap() { both_err --cap-add CAP_FOO true; }
t_exec_label_without_selinux() { both_err --ro-bind / / --exec-label foo true; }
t_file_label_without_selinux() { both_err --ro-bind / / --file-label foo true; }
t_exec_not_found() { both_err --ro-bind / / /nonexistent/cmd; }
t_exec_in_empty_root() { both_err true; }
t_missing_bind_source() { both_fail --bind /nonexistent/src /x true; }
t_chdir_missing() { both_fail --ro-bind / / --chdir /nonexistent true; }
t_chmod_missing_path() { both_fail --ro-bind / / --chmod 0755 /nonexistent true; }
t_lock_file_missing() { both_fail --ro-bind / / --lock-file /nonexistent true; }
t_symlink_over_existing() { both_fail --ro-bind / / --symlink a /usr true; }
t_dir_on_readonly() { both_fail --ro-bind / / --dir /usr/newdir true; }
t_remount_ro_missing() { both_fail --ro-bind / / --remount-ro /nonexistent true; }
t_assert_userns_disabled_fails() { both_err --assert-userns-disabled --ro-bind / / true; }
t_disable_userns_needs_unshare_user() { both_err --disable-userns --ro-bind / / true; }
t_userns_with_unshare_user() { both_err --userns 3 --unshare-user true 3</proc/self/ns/user; }
t_userns_bad_fd() { both_err --userns 99 --ro-bind / / true; }
t_help_usage_first_line() {
	run_both --help
	assert_eq 0 "$CRC" "exit code"
	assert_eq "$(head -n1 "$T_TMP/bwrap.out" | sed 's/^usage: [^ ]*/usage: bwrap/')" \
		"$(head -n1 "$T_TMP/cloister.out")" "usage line"
}
t_version() {
	# Documented form "bubblewrap X.Y.Z"; cloister implements 0.12's rules.
	run_both --version
	assert_eq 0 "$CRC" "exit code"
	assert_contains "$(cat "$T_TMP/cloister.out")" "bubblewrap 0.12"
}
t_nothing_left_behind_on_error() {
	local m; m=$(marker err)
	"$CL" bwrap --ro-bind / / --tmpfs /t --chdir /nonexistent sh -c 'sleep 30' "$m" 2>/dev/null
	assert_eq 1 "$?" "exit code"
	assert_no_process "$m"
}

run_tests
