#include "src/util/dl.h"

#include <dlfcn.h>

int cl_dl_table(const char *lib, const char *pkg, const char *const *names, size_t n,
                void **slots, cl_error *err)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return cl_fail(err, 0, "loading %s (install %s): %s", lib, pkg, dlerror());
	for (size_t i = 0; i < n; i++) {
		slots[i] = dlsym(h, names[i]);
		if (!slots[i]) {
			dlclose(h);
			return cl_fail(err, 0, "%s has no %s", lib, names[i]);
		}
	}
	return 0;
}
