/* Building and freeing a resolved seccomp profile (struct sc_profile).
 * Pure data; no libseccomp calls here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/profile.h"

int sc_profile_add(struct sc_profile *p, const char *name, uint32_t action,
                   const struct sc_cond *conds, unsigned n_conds, const char *reason)
{
	struct sc_rule *r;

	if (n_conds > SC_MAX_ARGS)
		return -EINVAL;
	r = realloc(p->rules, (p->n_rules + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->rules = r;
	r = &p->rules[p->n_rules];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	if (!r->name)
		return -ENOMEM;
	r->action = action;
	r->n_conds = n_conds;
	if (n_conds)
		memcpy(r->conds, conds, n_conds * sizeof(*conds));
	r->reason = reason;
	p->n_rules++;
	return 0;
}

int sc_profile_add_arch(struct sc_profile *p, uint32_t arch)
{
	uint32_t *a;

	for (size_t i = 0; i < p->n_arches; i++)
		if (p->arches[i] == arch)
			return 0;
	a = realloc(p->arches, (p->n_arches + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	p->arches = a;
	a[p->n_arches++] = arch;
	return 0;
}

/* Collects names once each, for the single warning line. */
void sc_profile_note_unknown(struct sc_profile *p, const char *name)
{
	size_t old = p->unknown ? strlen(p->unknown) : 0, n = strlen(name);
	char *s;

	if (p->unknown) {
		const char *q = p->unknown;
		while ((q = strstr(q, name))) {
			if ((q == p->unknown || q[-1] == ' ') && (q[n] == ' ' || !q[n]))
				return;
			q += n;
		}
	}
	s = realloc(p->unknown, old + n + 2);
	if (!s)
		return;  /* the warning is best effort */
	if (old)
		s[old++] = ' ';
	memcpy(s + old, name, n + 1);
	p->unknown = s;
}

void sc_profile_free(struct sc_profile *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		free(p->rules[i].name);
	free(p->rules);
	free(p->arches);
	free(p->unknown);
	memset(p, 0, sizeof(*p));
}
