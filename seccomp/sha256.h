/* SHA-256 for cache keys and cache entry checksums (FIPS 180-4). */
#ifndef SC_SHA256_H
#define SC_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sc_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t fill;
};

void sc_sha256_init(struct sc_sha256 *s);
void sc_sha256_update(struct sc_sha256 *s, const void *data, size_t len);
void sc_sha256_final(struct sc_sha256 *s, uint8_t out[32]);

#endif
