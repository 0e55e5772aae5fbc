/* `cloister diff apply|show`. */
#ifndef WS_CLI_H
#define WS_CLI_H

/* argv[0] is "diff". Returns the exit code. */
int ws_cli_diff_main(int argc, char **argv);

#endif
