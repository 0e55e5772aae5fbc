// A Smithers SandboxSession over one cloister session: create once, then
// exec / cp in / cp out as many times as the run needs, rm at the end.
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
  const created = await runCloister(bin, createArgs(request, options), { env });
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
      const timeoutMs = opts.timeoutMs ?? options.timeoutMs;
      if (Number.isFinite(timeoutMs) && timeoutMs > 0) args.push("--timeout", String(timeoutMs / 1000));
      args.push("--", "/bin/sh", "-c", command);
      const r = await call(args, { signal: opts.signal, maxBytes });
      if (opts.signal?.aborted) throw new Error(`cloister exec in ${id} was aborted`);
      if (r.code === TIMED_OUT && /timed out/.test(r.stderr)) {
        return { exitCode: TIMED_OUT, stdout: r.stdout, stderr: `${r.stderr}\ncommand timed out after ${timeoutMs} ms` };
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
