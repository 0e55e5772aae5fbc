/* Loads libgit2 (diff hunks, blob ids, ignore rules) and libcrypto (SHA-256) with
 * dlopen the first time a workspace diff is made, applied or shown. */
#define _GNU_SOURCE
#include "src/workspace/wsdl.h"
#include "src/util/dl.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

struct ws_git_api ws_git;

typedef const void *(*evp_md_fn)(void);
typedef int (*evp_digest_fn)(const void *, size_t, unsigned char *, unsigned int *, const void *,
                             void *);
static evp_md_fn evp_sha256;
static evp_digest_fn evp_digest;

static int load_git(cl_error *err)
{
	static const char *const names[] = {
		"git_libgit2_init", "git_diff_buffers", "git_odb_hash", "git_odb_hashfile", "git_oid_fmt",
		"git_error_last", "git_repository_new", "git_repository_free", "git_ignore_add_rule",
		"git_ignore_path_is_ignored",
	};
	struct ws_git_api api;
	void **slot = (void **)&api;

	_Static_assert(sizeof(api) == sizeof(names) / sizeof(*names) * sizeof(void *),
	               "one name per table entry");
	if (cl_dl_table("libgit2.so.1.5", "libgit2-1.5", names, sizeof(names) / sizeof(*names), slot, err) < 0)
		return cl_error_code(err);
	if (api.init() < 0)
		return cl_fail(err, 0, "initializing libgit2");
	memcpy(&ws_git, &api, sizeof(api));
	return 0;
}

static int load_crypto(cl_error *err)
{
	void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return cl_fail(err, 0, "loading libcrypto.so.3 (install libssl3): %s", dlerror());
	evp_sha256 = (evp_md_fn)dlsym(h, "EVP_sha256");
	evp_digest = (evp_digest_fn)dlsym(h, "EVP_Digest");
	if (!evp_sha256 || !evp_digest)
		return cl_fail(err, 0, "libcrypto.so.3 has no EVP_sha256/EVP_Digest");
	return 0;
}

int ws_dl_load(cl_error *err)
{
	static bool loaded;
	int rc;

	if (loaded)
		return 0;
	if ((rc = load_git(err)) < 0 || (rc = load_crypto(err)) < 0)
		return rc;
	loaded = true;
	return 0;
}

void ws_sha256(const void *buf, size_t len, unsigned char out[32])
{
	unsigned int n = 32;

	evp_digest(buf, len, out, &n, evp_sha256(), NULL);
}
