/* Session commands: create, exec, cp, ls, rm, and the session part of gc. */
#ifndef SS_CLI_H
#define SS_CLI_H

int ss_cli_create_main(int argc, char **argv);
int ss_cli_exec_main(int argc, char **argv);
int ss_cli_cp_main(int argc, char **argv);
int ss_cli_ls_main(int argc, char **argv);
int ss_cli_rm_main(int argc, char **argv);
/* `workspace snapshot --session KEY [--id ID]`: exit code 0 or 125. */
int ss_cli_snapshot(const char *key, const char *id);
/* Removes sessions whose supervisor is gone; prints each. */
void ss_gc_sweep(void);

#endif
