/* Whether overlayfs mounts in a user namespace here: the forked probe of
 * `cloister check`, its answer kept for the rest of the boot. */
#ifndef WS_PROBE_H
#define WS_PROBE_H

#include <stdbool.h>

/* dir_fd: cloister's state dir (the caller's), or -1. The answer comes
 * from .overlay-probe there when that file is the caller's, not writable by
 * others, and names this boot (/proc/sys/kernel/random/boot_id); else the
 * probe runs and the file is rewritten (best effort). */
bool ws_overlay_works(int dir_fd);

/* Runs the probe now (a forked child, ~1-2 ms): whether overlayfs mounts
 * in a new user namespace here; false with *err = the errno why not. */
bool ws_overlay_probe(int *err);

#endif
