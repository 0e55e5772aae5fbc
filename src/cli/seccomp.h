/* `cloister seccomp compile|show`: the profile tools. */
#ifndef SC_CLI_H
#define SC_CLI_H

/* argv[0] is "seccomp". Returns the process exit code (125 on bad input). */
int sc_cli_main(int argc, char **argv);

#endif
