/* `cloister diff apply|show` (cli.c) and `cloister workspace ...`
 * (snap_cli.c). */
#ifndef WS_CLI_H
#define WS_CLI_H

/* argv[0] is "diff". Returns the exit code. */
int ws_cli_diff_main(int argc, char **argv);
/* argv[0] is "workspace". Returns the exit code. */
int ws_cli_workspace_main(int argc, char **argv);

#endif
