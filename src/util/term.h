/* The caller's terminal in raw mode while a sandbox's own terminal is
 * relayed to it (native pty, docker Tty), and given back on every way out. */
#ifndef CL_TERM_H
#define CL_TERM_H

/* Saves fd's settings and makes it raw. From then until cl_term_restore a
 * fatal signal (SIGSEGV, SIGABRT, ...) restores the terminal before its
 * default action. One terminal per process. 0, or -errno (fd unchanged). */
int cl_term_raw(int fd);
/* Puts back what cl_term_raw saved; nothing if it is not in effect. */
void cl_term_restore(void);

#endif
