/* Capability handling for the sandbox: the drop, planned in the parent and
 * applied with raw syscalls in init and the command (no libcap, no
 * allocation: parts run in a vfork child). Names: src/policy/caps.h. */
#ifndef NS_CAPS_H
#define NS_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "src/util/error.h"

/* Plain data the drop needs, computed before clone. */
struct ns_caps_plan {
	uint64_t keep;     /* the caps that stay (--cap-add) */
	unsigned last;     /* highest capability number this kernel knows */
	/* bwrap run by root without --cap-add/--cap-drop keeps the caller's
	 * sets; the bounding set shrinks only with a new user namespace. */
	bool keep_bounding;  /* the bounding set stays as it is */
	bool keep_current;   /* no capset, no ambient change: the current sets stay */
};

void ns_caps_plan(struct ns_caps_plan *pl, uint64_t keep);
/* Bounding set and ambient cleared, permitted/effective/inheritable set to
 * keep (each part skipped when the plan keeps it). The bounding set needs CAP_SETPCAP, so this runs first; a process
 * forked afterwards inherits the result. */
int ns_caps_limit(const struct ns_caps_plan *pl, cl_error *err);
/* Raises every kept cap in ambient, so it survives exec as a non-root uid.
 * Needs them permitted and inheritable (ns_caps_limit). */
int ns_caps_raise_ambient(const struct ns_caps_plan *pl, cl_error *err);
/* Permitted, effective and inheritable emptied. */
int ns_caps_clear(cl_error *err);

#endif
