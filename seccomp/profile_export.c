/* A resolved profile as Docker/OCI seccomp JSON: what `seccomp show --json`
 * prints and what the docker executor hands to the daemon. */
#include "seccomp/profile.h"

#include <jansson.h>

/* Same shape as a Docker profile, so the output loads back as one. */
static json_t *action_json(json_t *o, const char *key, const char *ekey, uint32_t a)
{
	char buf[64];
	const char *n = sc_action_name(a, buf, sizeof(buf));

	if ((a & 0xffff0000U) == 0x00050000U) {
		json_object_set_new(o, key, json_string("SCMP_ACT_ERRNO"));
		json_object_set_new(o, ekey, json_integer(a & 0xffff));
	} else if ((a & 0xffff0000U) == 0x7ff00000U) {
		json_object_set_new(o, key, json_string("SCMP_ACT_TRACE"));
		json_object_set_new(o, ekey, json_integer(a & 0xffff));
	} else {
		json_object_set_new(o, key, json_string(n));
	}
	return o;
}

json_t *sc_profile_to_json(const struct sc_profile *p)
{
	json_t *o = json_object(), *arr = json_array(), *sys = json_array();

	if (!o || !arr || !sys) {
		json_decref(o);
		json_decref(arr);
		json_decref(sys);
		return NULL;
	}
	action_json(o, "defaultAction", "defaultErrnoRet", p->default_action);
	for (size_t i = 0; i < p->n_arches; i++)
		json_array_append_new(arr, json_string(sc_arch_name(p->arches[i])));
	if (p->n_arches)
		json_object_set_new(o, "architectures", arr);
	else
		json_decref(arr);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sc_rule *r = &p->rules[i];
		json_t *e = json_object(), *names = json_array(), *args = json_array();
		json_array_append_new(names, json_string(r->name));
		json_object_set_new(e, "names", names);
		action_json(e, "action", "errnoRet", r->action);
		for (unsigned c = 0; c < r->n_conds; c++) {
			json_t *a = json_object();
			json_object_set_new(a, "index", json_integer(r->conds[c].arg));
			json_object_set_new(a, "value", json_integer((json_int_t)r->conds[c].v));
			json_object_set_new(a, "valueTwo", json_integer((json_int_t)r->conds[c].v2));
			json_object_set_new(a, "op", json_string(sc_op_name(r->conds[c].op)));
			json_array_append_new(args, a);
		}
		if (r->n_conds)
			json_object_set_new(e, "args", args);
		else
			json_decref(args);
		if (r->reason)
			json_object_set_new(e, "comment", json_string(r->reason));
		json_array_append_new(sys, e);
	}
	json_object_set_new(o, "syscalls", sys);
	return o;
}

