/* The ustar reader: 512-byte headers with checked checksums and octal
 * fields, payloads passed through in pieces, GNU 'L' long names and pax
 * 'x' path records bounded; anything it cannot read exactly is refused. */
#define _GNU_SOURCE
#include "src/util/tar_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_HEADER, T_META, T_DATA, T_PAD, T_END };

void cl_tar_init(struct cl_tar *t, const struct cl_tar_ops *ops, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->ops = ops;
	t->ctx = ctx;
}

void cl_tar_free(struct cl_tar *t)
{
	free(t->meta);
	t->meta = NULL;
}

int cl_tar_done(const struct cl_tar *t)
{
	return t->state == T_END;
}

static int __attribute__((format(printf, 2, 3))) refuse(struct cl_tar *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* An octal field: digits, then spaces or NULs to its end. Base-256 (GNU's
 * huge sizes) is refused: no member of a bundle needs it. */
static int octal(const unsigned char *f, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -1;
		v = v * 8 + (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	*out = v;
	return 0;
}

static bool checksum_ok(const unsigned char *h)
{
	uint64_t want, sum = 0;

	if (octal(h + 148, 8, &want) < 0)
		return false;
	for (size_t i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return sum == want;
}

/* Length of a NUL-padded header field of at most max bytes. (Not strnlen
 * on h + offset: some GCC builds then take the field for a 0-byte object.) */
static int field_len(const unsigned char *f, size_t max)
{
	size_t n = 0;

	while (n < max && f[n])
		n++;
	return (int)n;
}

/* name (100) or, in POSIX ustar, prefix (155) "/" name. */
static void header_name(const unsigned char *h, char *out, size_t len)
{
	int nl = field_len(h, 100);
	int pl = field_len(h + 345, 155);

	if (memcmp(h + 257, "ustar\0", 6) == 0 && pl)
		snprintf(out, len, "%.*s/%.*s", pl, (const char *)h + 345, nl, (const char *)h);
	else
		snprintf(out, len, "%.*s", nl, (const char *)h);
}

/* "LEN path=VALUE\n" records; only path is taken, a size record (which
 * would change how the payload is read) is refused. */
static int pax_path(struct cl_tar *t)
{
	size_t i = 0;

	while (i < t->meta_len) {
		char *sp, *end, *eq;
		unsigned long rl = strtoul(t->meta + i, &end, 10);
		if (end == t->meta + i || *end != ' ' || rl < 5 || rl > t->meta_len - i ||
		    t->meta[i + rl - 1] != '\n')
			return refuse(t, "malformed pax header");
		sp = end + 1;
		eq = memchr(sp, '=', (size_t)(t->meta + i + rl - 1 - sp));
		if (!eq)
			return refuse(t, "malformed pax header");
		if ((size_t)(eq - sp) == 4 && memcmp(sp, "size", 4) == 0)
			return refuse(t, "pax size records are not supported");
		if ((size_t)(eq - sp) == 4 && memcmp(sp, "path", 4) == 0) {
			size_t vl = (size_t)(t->meta + i + rl - 1 - (eq + 1));
			if (vl == 0 || vl >= sizeof(t->next_name) || memchr(eq + 1, '\0', vl))
				return refuse(t, "pax path empty, too long or with a NUL");
			memcpy(t->next_name, eq + 1, vl);
			t->next_name[vl] = '\0';
		}
		i += rl;
	}
	return 0;
}

static int meta_done(struct cl_tar *t)
{
	if (t->meta_type == 'x')
		return pax_path(t);
	if (t->meta_type == 'L') {
		size_t n = strnlen(t->meta, t->meta_len);
		if (n == 0 || n >= sizeof(t->next_name))
			return refuse(t, "GNU long name empty or too long");
		memcpy(t->next_name, t->meta, n);
		t->next_name[n] = '\0';
	}
	return 0;   /* 'g': global pax records, nothing this reader uses */
}

static int header(struct cl_tar *t)
{
	const unsigned char *h = t->blk;
	uint64_t size, mode;
	char type = (char)h[156];
	bool zero = true;
	int rc;

	for (size_t i = 0; i < 512 && zero; i++)
		zero = h[i] == 0;
	if (zero) {
		/* Two zero blocks end the archive. */
		if (++t->zero_blocks == 2)
			t->state = T_END;
		return 0;
	}
	if (t->zero_blocks)
		return refuse(t, "a lone zero block inside the archive");
	if (memcmp(h + 257, "ustar", 5) != 0)
		return refuse(t, "not a ustar header");
	if (!checksum_ok(h))
		return refuse(t, "header checksum mismatch");
	if (octal(h + 124, 12, &size) < 0 || octal(h + 100, 8, &mode) < 0)
		return refuse(t, "malformed size or mode field");
	t->left = size;
	t->pad = (512 - size % 512) % 512;
	if (type == 'L' || type == 'x' || type == 'g') {
		if (size > CL_TAR_PAX_MAX)
			return refuse(t, "a %c header of %llu bytes", type, (unsigned long long)size);
		free(t->meta);
		t->meta = malloc(size + 1);
		if (!t->meta)
			return -ENOMEM;
		t->meta_len = 0;
		t->meta_cap = size;
		t->meta_type = type;
		t->state = T_META;
		if (size == 0)
			return meta_done(t) ?: (t->state = T_HEADER, 0);
		return 0;
	}
	/* '0'/NUL/'7' files, '5' dirs; links and device nodes go to begin(),
	 * which refuses them with the member's name. */
	if (type != '\0' && (type < '0' || type > '7'))
		return refuse(t, "member type '%c' is not supported", type ? type : '0');
	memset(&t->m, 0, sizeof(t->m));
	t->m.type = (char)(type == '\0' || type == '7' ? '0' : type);
	t->m.mode = (unsigned)(mode & 07777);
	if (t->next_name[0]) {
		snprintf(t->m.name, sizeof(t->m.name), "%s", t->next_name);
		t->next_name[0] = '\0';
	} else {
		header_name(h, t->m.name, sizeof(t->m.name));
	}
	/* Only files carry data; a link or directory with a payload is not
	 * something tar writes. */
	if (t->m.type != '0' && size)
		return refuse(t, "member '%.100s' of type '%c' has a payload", t->m.name, t->m.type);
	t->m.size = size;
	rc = t->ops->begin(t->ctx, &t->m);
	if (rc < 0)
		return rc;
	t->state = size ? T_DATA : T_HEADER;
	if (!size)
		return t->ops->end(t->ctx);
	return 0;
}

int cl_tar_feed(struct cl_tar *t, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int rc = 0;

	while (len && rc == 0) {
		size_t n;
		switch (t->state) {
		case T_END:
			return 0;   /* record padding after the marker */
		case T_HEADER:
			n = 512 - t->blk_len < len ? 512 - t->blk_len : len;
			memcpy(t->blk + t->blk_len, p, n);
			t->blk_len += n;
			if (t->blk_len == 512) {
				t->blk_len = 0;
				rc = header(t);
			}
			break;
		case T_META:
			n = t->left < len ? (size_t)t->left : len;
			memcpy(t->meta + t->meta_len, p, n);
			t->meta_len += n;
			t->left -= n;
			if (!t->left) {
				t->meta[t->meta_len] = '\0';
				rc = meta_done(t);
				t->state = T_PAD;
			}
			break;
		case T_DATA:
			n = t->left < len ? (size_t)t->left : len;
			rc = t->ops->data(t->ctx, p, n);
			t->left -= n;
			if (rc == 0 && !t->left) {
				rc = t->ops->end(t->ctx);
				t->state = T_PAD;
			}
			break;
		default:   /* T_PAD */
			n = t->pad < len ? (size_t)t->pad : len;
			t->pad -= n;
			break;
		}
		if (t->state == T_PAD && !t->pad)
			t->state = T_HEADER;
		p += n;
		len -= n;
	}
	return rc;
}

int cl_tar_finish(struct cl_tar *t)
{
	if (t->state == T_END)
		return 0;
	return refuse(t, "the archive ends early (no end-of-archive marker)");
}
