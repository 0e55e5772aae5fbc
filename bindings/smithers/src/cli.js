// Runs the cloister binary: one child process per call, arguments as an
// array (never a shell), stdout/stderr captured with a byte cap.
import { spawn } from "node:child_process";

/**
 * @param {string} bin
 * @param {string[]} args
 * @param {{ input?: string, signal?: AbortSignal, maxBytes?: number, env?: Record<string,string> }} [opts]
 * @returns {Promise<{ code: number, stdout: string, stderr: string, truncated: boolean }>}
 */
export function runCloister(bin, args, opts = {}) {
  const max = Number.isFinite(opts.maxBytes) && opts.maxBytes > 0 ? opts.maxBytes : 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
    });
    const out = [];
    const err = [];
    let outLen = 0;
    let errLen = 0;
    let truncated = false;
    const onAbort = () => child.kill("SIGKILL");
    if (opts.signal) {
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener("abort", onAbort, { once: true });
    }
    // The cap covers stdout and stderr together, as Smithers' maxOutputBytes.
    const take = (chunks, chunk, isOut) => {
      const room = max - outLen - errLen;
      if (room <= 0) {
        truncated = true;
        return;
      }
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (part.length < chunk.length) truncated = true;
      chunks.push(part);
      if (isOut) outLen += part.length;
      else errLen += part.length;
    };
    child.stdout.on("data", (c) => take(out, c, true));
    child.stderr.on("data", (c) => take(err, c, false));
    child.on("error", (e) => {
      opts.signal?.removeEventListener("abort", onAbort);
      reject(e);
    });
    child.on("close", (code, sig) => {
      opts.signal?.removeEventListener("abort", onAbort);
      resolve({
        code: code ?? (sig ? 128 + signalNumber(sig) : 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        truncated,
      });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
  });
}

function signalNumber(name) {
  const table = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return table[name] ?? 0;
}
