/* libFuzzer target: the Docker/OCI seccomp profile loader
 * (sc_profile_from_json) and, for a profile it accepts, the compiler to
 * BPF (sc_compile). The first byte picks the context (capabilities the
 * sandbox keeps, nested namespaces allowed); the rest is the JSON. */
#include <stdlib.h>

#include "seccomp/profile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct sc_context ctx = {0};
	struct sc_profile prof = {0};
	struct sock_filter *f = NULL;
	cl_error err = {0};
	size_t n = 0;

	if (len < 1)
		return 0;
	/* bit 0: nested namespaces; bits 1-7: one of the capabilities whose
	 * presence changes the profile's rules (0..38, CAP_SYS_ADMIN is 21). */
	ctx.allow_nested = data[0] & 1;
	if ((data[0] >> 1) % 40 < 39)
		ctx.caps = 1ULL << ((data[0] >> 1) % 40);
	if (sc_profile_from_json((const char *)data + 1, len - 1, "fuzz.json", &ctx, &prof,
	                         &err) == 0) {
		cl_error cerr = {0};
		if (sc_compile(&prof, &f, &n, &cerr) == 0)
			free(f);
	}
	sc_profile_free(&prof);
	return 0;
}
