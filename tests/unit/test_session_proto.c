/* Unit tests for the session control protocol parser: table rows of a
 * request (tokens, fd count) and whether it parses, plus the fields a
 * good request yields and the token builder's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/session/proto.h"
#include "unit.h"

/* Requests as literal bytes: "\0" separates tokens; len includes the last NUL. */
#define R(s) s, sizeof(s) - 1
static const struct { const char *name; const char *buf; size_t len; size_t fds; int rc; } rows[] = {
	{"exec with a command", R("exec\0Atrue\0"), 3, 0},
	{"exec with all fields", R("exec\0T500\0W/tmp\0EK=V\0Ash\0A-c\0A\0"), 3, 0},
	{"empty argument is fine", R("exec\0Aecho\0A\0"), 3, 0},
	{"put", R("put\0P/tmp/x\0M644\0Nname\0"), 1, 0},
	{"get", R("get\0P/tmp/x\0"), 1, 0},
	{"stop", R("stop\0"), 0, 0},
	{"ping", R("ping\0"), 0, 0},
	{"empty", "", 0, 0, -1},
	{"no final NUL", R("exec\0Atrue"), 3, -1},
	{"unknown op", R("nope\0"), 0, -1},
	{"exec without command", R("exec\0"), 3, -1},
	{"exec with 0 fds", R("exec\0Atrue\0"), 0, -1},
	{"exec with 1 fd", R("exec\0Atrue\0"), 1, -1},
	{"stop with an fd", R("stop\0"), 1, -1},
	{"unknown tag", R("exec\0Xx\0Atrue\0"), 3, -1},
	{"empty token", R("exec\0\0Atrue\0"), 3, -1},
	{"relative workdir", R("exec\0Wtmp\0Atrue\0"), 3, -1},
	{"env without =", R("exec\0EK\0Atrue\0"), 3, -1},
	{"env with empty key", R("exec\0E=V\0Atrue\0"), 3, -1},
	{"timeout 0", R("exec\0T0\0Atrue\0"), 3, -1},
	{"timeout not a number", R("exec\0T1s\0Atrue\0"), 3, -1},
	{"timeout too large", R("exec\0T99999999999999999999\0Atrue\0"), 3, -1},
	{"path on exec", R("exec\0P/x\0Atrue\0"), 3, -1},
	{"argument on put", R("put\0P/x\0Atrue\0"), 1, -1},
	{"put without path", R("put\0M644\0"), 1, -1},
	{"relative path", R("get\0Px\0"), 1, -1},
	{"two paths", R("get\0P/a\0P/b\0"), 1, -1},
	{"mode not octal", R("put\0P/x\0M9\0"), 1, -1},
	{"mode too long", R("put\0P/x\0M77777\0"), 1, -1},
	{"name with slash", R("put\0P/x\0Na/b\0"), 1, -1},
	{"name ..", R("put\0P/x\0N..\0"), 1, -1},
	{"name empty", R("put\0P/x\0N\0"), 1, -1},
	{"name on get", R("get\0P/x\0Nn\0"), 1, -1},
	{"mkdir on put", R("put\0P/x\0D1\0"), 1, 0},
	{"mkdir with another value", R("put\0P/x\0D2\0"), 1, -1},
	{"mkdir on get", R("get\0P/x\0D1\0"), 1, -1},
	{"pty on exec", R("exec\0C5\0Z24x80\0Atrue\0"), 3, 0},
	{"pty mask 0", R("exec\0C0\0Atrue\0"), 3, -1},
	{"pty mask 8", R("exec\0C8\0Atrue\0"), 3, -1},
	{"pty mask two digits", R("exec\0C12\0Atrue\0"), 3, -1},
	{"pty on put", R("put\0P/x\0C1\0"), 1, -1},
	{"size without x", R("exec\0Z24\0Atrue\0"), 3, -1},
	{"size without rows", R("exec\0Zx80\0Atrue\0"), 3, -1},
	{"size negative", R("exec\0Z24x-1\0Atrue\0"), 3, -1},
	{"size too large", R("exec\0Z65536x80\0Atrue\0"), 3, -1},
	{"size with junk", R("exec\0Z24x80x1\0Atrue\0"), 3, -1},
	{"tree on put", R("put\0P/x\0R1\0Nn\0"), 1, 0},
	{"tree on get", R("get\0P/x\0R1\0"), 1, 0},
	{"tree with another value", R("get\0P/x\0R2\0"), 1, -1},
	{"tree on exec", R("exec\0R1\0Atrue\0"), 3, -1},
	{"snap", R("snap\0"), 0, 0},
	{"snap with an id", R("snap\0Iv1.a_b-c\0"), 0, 0},
	{"snap with an fd", R("snap\0"), 1, -1},
	{"snap with two ids", R("snap\0Ia\0Ib\0"), 0, -1},
	{"snap id empty", R("snap\0I\0"), 0, -1},
	{"snap id with slash", R("snap\0Ia/b\0"), 0, -1},
	{"snap id ..", R("snap\0I..\0"), 0, -1},
	{"snap id starting with .", R("snap\0I.tmp-1\0"), 0, -1},
	{"snap id too long", R("snap\0I01234567890123456789012345678901234567890123456789012345678901234\0"), 0, -1},
	{"snap with an argument", R("snap\0Atrue\0"), 0, -1},
	{"snap with a path", R("snap\0P/x\0"), 0, -1},
	{"id on exec", R("exec\0Ia\0Atrue\0"), 3, -1},
};

static void parse_rows(void)
{
	int fds[SS_MAX_FDS] = {10, 11, 12};
	static struct ss_req r;
	static char buf[256];
	char name[128];
	cl_error err;

	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		memcpy(buf, rows[i].buf, rows[i].len);
		memset(&err, 0, sizeof(err));
		int rc = ss_req_parse(buf, rows[i].len, fds, rows[i].fds, &r, &err);
		snprintf(name, sizeof(name), "parse: %s", rows[i].name);
		CHECK(name, (rc < 0) == (rows[i].rc < 0) && (rc == 0 || err.msg[0]));
	}
}

static void fields(void)
{
	static char buf[] = "exec\0T500\0W/tmp\0EK=V\0Ash\0A-c\0Aecho hi\0";
	int fds[3] = {7, 8, 9};
	static struct ss_req r;
	cl_error err = {0};

	CHECK("fields parse", ss_req_parse(buf, sizeof(buf) - 1, fds, 3, &r, &err) == 0);
	CHECK("fields: op", r.op == SS_OP_EXEC);
	CHECK("fields: timeout", r.timeout_ms == 500);
	CHECK("fields: workdir", r.workdir && strcmp(r.workdir, "/tmp") == 0);
	CHECK("fields: env", r.n_env == 1 && strcmp(r.env[0], "K=V") == 0);
	CHECK("fields: argv", r.n_argv == 3 && strcmp(r.argv[2], "echo hi") == 0 && !r.argv[3]);
	CHECK("fields: fds", r.n_fds == 3 && r.fds[0] == 7 && r.fds[2] == 9);
	static char put[] = "put\0P/w\0M750\0";
	CHECK("put mode is octal", ss_req_parse(put, sizeof(put) - 1, fds, 1, &r, &err) == 0 &&
	      r.mode == 0750);
	static char pty[] = "exec\0C6\0Z40x100\0Atrue\0";
	CHECK("pty fields", ss_req_parse(pty, sizeof(pty) - 1, fds, 3, &r, &err) == 0 &&
	      r.pty_mask == 6 && r.rows == 40 && r.cols == 100);
	static char snap[] = "snap\0Ibefore\0";
	CHECK("snap id", ss_req_parse(snap, sizeof(snap) - 1, fds, 0, &r, &err) == 0 &&
	      r.op == SS_OP_SNAP && r.snap_id && strcmp(r.snap_id, "before") == 0);
	static char snap0[] = "snap\0";
	CHECK("snap without id", ss_req_parse(snap0, sizeof(snap0) - 1, fds, 0, &r, &err) == 0 &&
	      !r.snap_id);
	static char plain[] = "exec\0Atrue\0";
	CHECK("no pty by default", ss_req_parse(plain, sizeof(plain) - 1, fds, 3, &r, &err) == 0 &&
	      r.pty_mask == 0 && !r.tree);
}

/* More arguments than the parser takes: refused, never written past. */
static void too_many(void)
{
	size_t n = SS_MAX_ITEMS + 2, len = 5 + n * 3;
	char *buf = malloc(len);
	static struct ss_req r;
	int fds[3] = {0, 1, 2};
	cl_error err = {0};

	memcpy(buf, "exec", 5);
	for (size_t i = 0; i < n; i++)
		memcpy(buf + 5 + i * 3, "Ax", 3);
	CHECK("too many arguments refused", ss_req_parse(buf, len, fds, 3, &r, &err) < 0);
	free(buf);
}

static void builder(void)
{
	struct ss_buf b = {0};

	ss_buf_add(&b, 0, "exec");
	ss_buf_add(&b, 'A', "true");
	ss_buf_add(&b, 'A', "");
	CHECK("builder output", b.len == 13 && memcmp(b.data, "exec\0Atrue\0A\0", 13) == 0);
	ss_buf_free(&b);
}

int main(void)
{
	parse_rows();
	fields();
	too_many();
	builder();
	UNIT_MAIN_END;
}
