/* Egress settings of a sandbox spec: validated as Smithers validates them,
 * projected into the sandbox's environment, and redacted for storage. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/sandbox/egress.h"
#include "src/sandbox/spec.h"

static int opt_str(json_t *obj, const char *key, const char *field, const char **out,
                   struct sb_error *e)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    sb_json_js_length(v) > SB_STRING_MAX || sb_json_has_nul(v))
		return sb_invalid(e, field, "%s must be a non-empty string within supported bounds.", field);
	*out = json_string_value(v);
	return 0;
}

static int str_record(json_t *v, const char *field, bool env_keys, json_t **out,
                      struct sb_error *e)
{
	const char *k;
	json_t *val;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return sb_invalid(e, field, "%s must be a flat object of string values.", field);
	json_object_foreach(v, k, val) {
		if (env_keys && !sb_env_name_ok(k))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:s}", "field", field, "key", k),
			               "%s keys must be valid environment variable names.", field);
		if (strlen(k) == 0 || sb_js_length(k, strlen(k)) > 512)
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:s}", "field", field, "key", k),
			               "%s keys must be strings within supported bounds.", field);
		if (!json_is_string(val) || sb_json_js_length(val) > SB_STRING_MAX || sb_json_has_nul(val))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s,s:s}", "field", field, "key", k),
			               "%s values must be strings within supported bounds.", field);
	}
	*out = json_object_size(v) ? v : NULL;
	return 0;
}

static int no_proxy(json_t *v, struct sb_egress *eg, struct sb_error *e)
{
	size_t i, len = 0;
	json_t *item;

	if (!v)
		return 0;
	if (json_is_string(v)) {
		if (json_string_length(v) == 0 || sb_json_js_length(v) > SB_STRING_MAX || sb_json_has_nul(v))
			return sb_invalid(e, "egress.noProxy",
			                  "egress.noProxy must be a non-empty string within supported bounds.");
		eg->no_proxy = strdup(json_string_value(v));
		return eg->no_proxy ? 0 : sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "egress.noProxy");
	}
	if (!json_is_array(v))
		return sb_invalid(e, "egress.noProxy", "egress.noProxy must be a string or string array.");
	json_array_foreach(v, i, item) {
		if (!json_is_string(item) || json_string_length(item) == 0 ||
		    sb_json_js_length(item) > SB_STRING_MAX || sb_json_has_nul(item)) {
			char field[48];
			snprintf(field, sizeof(field), "egress.noProxy[%zu]", i);
			return sb_invalid(e, field, "%s must be a non-empty string within supported bounds.", field);
		}
		len += json_string_length(item) + 1;
	}
	if (json_array_size(v) == 0)
		return 0;
	if (!(eg->no_proxy = calloc(1, len + 1)))
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "egress.noProxy");
	size_t at = 0;
	json_array_foreach(v, i, item) {
		size_t n = json_string_length(item);
		if (i)
			eg->no_proxy[at++] = ',';
		memcpy(eg->no_proxy + at, json_string_value(item), n);   /* len counted n + 1 */
		at += n;
	}
	return 0;
}

int sb_egress_parse(json_t *v, struct sb_egress *eg, struct sb_error *e)
{
	static const char *const known[] = {"httpProxy", "httpsProxy", "noProxy", "caCertPem",
	                                    "caCertPath", "env", "secretBindings", NULL};
	int rc;

	memset(eg, 0, sizeof(*eg));
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (!json_is_object(v))
		return sb_invalid(e, "egress", "Sandbox egress must be an object.");
	if ((rc = sb_check_known(v, known, "egress.", e)) < 0)
		return rc;
	if ((rc = str_record(json_object_get(v, "env"), "egress.env", true, &eg->env, e)) < 0 ||
	    (rc = opt_str(v, "httpProxy", "egress.httpProxy", &eg->http_proxy, e)) < 0 ||
	    (rc = opt_str(v, "httpsProxy", "egress.httpsProxy", &eg->https_proxy, e)) < 0 ||
	    (rc = no_proxy(json_object_get(v, "noProxy"), eg, e)) < 0 ||
	    (rc = opt_str(v, "caCertPem", "egress.caCertPem", &eg->ca_pem, e)) < 0 ||
	    (rc = opt_str(v, "caCertPath", "egress.caCertPath", &eg->ca_path, e)) < 0 ||
	    (rc = str_record(json_object_get(v, "secretBindings"), "egress.secretBindings", false,
	                     &eg->secret_bindings, e)) < 0)
		return rc;
	if (eg->ca_pem && eg->ca_path)
		return sb_invalid(e, "egress", "Sandbox egress must use either caCertPem or caCertPath, not both.");
	eg->present = eg->env || eg->http_proxy || eg->https_proxy || eg->no_proxy || eg->ca_pem ||
	              eg->ca_path || eg->secret_bindings;
	return 0;
}

void sb_egress_free(struct sb_egress *eg)
{
	free(eg->no_proxy);
	eg->no_proxy = NULL;
}

static void set(json_t *env, const char *k, const char *v)
{
	json_object_set_new(env, k, json_string(v));
}

json_t *sb_egress_env(const struct sb_egress *eg, const char *http_proxy, const char *https_proxy)
{
	json_t *env = json_object();
	const char *ca;

	if (!eg->present)
		return env;
	if (eg->env)
		json_object_update(env, eg->env);
	if (http_proxy) {
		set(env, "HTTP_PROXY", http_proxy);
		set(env, "http_proxy", http_proxy);
	}
	if (https_proxy) {
		set(env, "HTTPS_PROXY", https_proxy);
		set(env, "https_proxy", https_proxy);
	}
	if (eg->no_proxy) {
		set(env, "NO_PROXY", eg->no_proxy);
		set(env, "no_proxy", eg->no_proxy);
	}
	ca = eg->ca_path ? eg->ca_path : eg->ca_pem ? SB_EGRESS_CA_INSIDE : NULL;
	if (ca) {
		static const char *const vars[] = {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS",
		                                   "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"};
		for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++)
			set(env, vars[i], ca);
	}
	return env;
}

static json_t *redacted_keys(json_t *obj, bool rename)
{
	json_t *out = json_object();
	const char **keys = calloc(json_object_size(obj) + 1, sizeof(*keys));
	const char *k;
	json_t *v;
	size_t n = 0;

	if (!keys)
		return out;
	json_object_foreach(obj, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof(*keys), (int (*)(const void *, const void *))strcmp);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		/* Secret binding names are themselves sensitive: only the count shows. */
		snprintf(name, sizeof(name), "binding_%zu", i + 1);
		set(out, rename ? name : keys[i], "[redacted]");
	}
	free(keys);
	return out;
}

json_t *sb_egress_redacted(const struct sb_egress *eg)
{
	json_t *o = json_object();

	if (eg->env)
		json_object_set_new(o, "env", redacted_keys(eg->env, false));
	if (eg->http_proxy)
		set(o, "httpProxy", "[redacted]");
	if (eg->https_proxy)
		set(o, "httpsProxy", "[redacted]");
	if (eg->no_proxy)
		set(o, "noProxy", "[redacted]");
	if (eg->ca_pem)
		set(o, "caCertPem", "[redacted]");
	if (eg->ca_path)
		set(o, "caCertPath", "[redacted]");
	if (eg->secret_bindings)
		json_object_set_new(o, "secretBindings", redacted_keys(eg->secret_bindings, true));
	return o;
}
