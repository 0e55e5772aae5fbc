// A Smithers SandboxSession over one cloister session: create once, then
// exec / cp in / cp out as many times as the run needs, rm at the end.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCloister } from "./cli.js";
import { createArgs } from "./policy.js";

const TIMED_OUT = 124;

/**
 * @param {Record<string, any>} request
 * @param {Record<string, any>} [options]
 * @returns {Promise<import("@smithers-orchestrator/sandbox/provider-kit/SandboxSession.ts").SandboxSession>}
 */
export async function createCloisterSession(request, options = {}) {
  const bin = options.cloister ?? process.env.CLOISTER ?? "cloister";
  const env = options.runtimeDir ? { CLOISTER_RUNTIME_DIR: options.runtimeDir } : undefined;
  const maxBytes = options.maxOutputBytes ?? request.maxOutputBytes;
  const createArgv = createArgs(request, options);
  const memoryAt = createArgv.indexOf("--memory");
  const memory = memoryAt > 0 ? createArgv[memoryAt + 1] : undefined;
  const created = await runCloister(bin, createArgv, { env });
  const id = created.stdout.trim();
  if (created.code !== 0 || !/^[0-9a-f]{12}$/.test(id)) {
    throw new Error(`cloister create failed (exit ${created.code}): ${created.stderr.trim()}`);
  }
  const call = async (args, extra = {}) => runCloister(bin, args, { env, ...extra });
  const mustSucceed = (what, r) => {
    if (r.code !== 0) throw new Error(`cloister ${what} failed (exit ${r.code}): ${r.stderr.trim()}`);
    return r;
  };
  let destroyed = false;

  return {
    remoteId: id,
    async writeFile(path, content) {
      mustSucceed("cp", await call(["cp", "--mkdir", "-", `${id}:${path}`], { input: content }));
    },
    async readFile(path) {
      return mustSucceed("cp", await call(["cp", `${id}:${path}`, "-"])).stdout;
    },
    async exec(command, opts = {}) {
      const args = ["exec", id];
      for (const [k, v] of Object.entries(opts.env ?? {})) args.push("--env", `${k}=${v}`);
      if (opts.cwd) args.push("-w", opts.cwd);
      // The shorter of the two: a <Sandbox> always asks for Smithers'
      // default tool timeout (60 s), which must not loosen the provider's.
      const limits = [opts.timeoutMs, options.timeoutMs].filter((t) => Number.isFinite(t) && t > 0);
      const timeoutMs = limits.length ? Math.min(...limits) : undefined;
      if (timeoutMs !== undefined) args.push("--timeout", String(timeoutMs / 1000));
      // The status JSON says what the exit code cannot: whether the
      // session's cgroup OOM-killed the command.
      const dir = await mkdtemp(join(tmpdir(), "cloister-provider-"));
      let r, status;
      try {
        args.push("--json-status", join(dir, "status.json"), "--", "/bin/sh", "-c", command);
        r = await call(args, { signal: opts.signal, maxBytes });
        status = await readFile(join(dir, "status.json"), "utf8").then(JSON.parse, () => ({}));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      if (opts.signal?.aborted) throw new Error(`cloister exec in ${id} was aborted`);
      // Our note goes first: Smithers keeps the head of a long stderr.
      if (status.timed_out || (r.code === TIMED_OUT && /timed out/.test(r.stderr))) {
        const rest = r.stderr.replace(/cloister: command timed out after [0-9]+ ms\n?$/, "");
        return { exitCode: TIMED_OUT, stdout: r.stdout, stderr: `command timed out after ${timeoutMs} ms\n${rest}` };
      }
      if (status.oom_killed) {
        const limit = memory ? `memory limit ${memory}` : "the session's memory limit";
        return { exitCode: r.code, stdout: r.stdout,
          stderr: `command killed: out of memory (OOM, ${limit})\n${r.stderr}` };
      }
      return { exitCode: r.code, stdout: r.stdout, stderr: r.stderr };
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      const r = await call(["rm", id]);
      if (r.code !== 0 && !/no session/.test(r.stderr)) {
        throw new Error(`cloister rm ${id} failed (exit ${r.code}): ${r.stderr.trim()}`);
      }
    },
  };
}
