/* `cloister sandbox run --spec FILE|-` and `cloister bundle validate DIR`. */
#ifndef SB_CLI_H
#define SB_CLI_H

int sb_cli_sandbox_main(int argc, char **argv);
int sb_cli_bundle_main(int argc, char **argv);

#endif
