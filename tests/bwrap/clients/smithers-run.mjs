// Runs one command through Smithers' own bubblewrap runtime (the executor
// layer of @smithers-orchestrator/sandbox: create, execute, collect), as a
// Smithers run does, and prints what it reported as one JSON line.
// Usage: bun smithers-run.mjs INSTALL_DIR ROOT_DIR ALLOW_NET(0|1) ABORT_MS COMMAND
const [dir, rootDir, allowNet, abortMs, command] = process.argv.slice(2);
const mod = (p) => import(`${dir}/node_modules/${p}`);
const { existsSync } = await import("node:fs");
// The one copy of effect the sandbox package itself resolves (npm may nest it).
const nested = "@smithers-orchestrator/sandbox/node_modules/effect/dist/index.js";
const { Effect } = await mod(existsSync(`${dir}/node_modules/${nested}`) ? nested : "effect/dist/index.js");
const { SandboxEntityExecutor } = await mod("@smithers-orchestrator/sandbox/src/effect/sandbox-entity.js");
const { BubblewrapSandboxExecutorLive } = await mod("@smithers-orchestrator/sandbox/src/effect/socket-runner.js");
const { readdirSync, readFileSync } = await import("node:fs");

const abort = new AbortController();
if (Number(abortMs) > 0) setTimeout(() => abort.abort(), Number(abortMs));
const run = Effect.gen(function* () {
  const ex = yield* SandboxEntityExecutor;
  const handle = yield* ex.create({ runtime: "bubblewrap", runId: "r1", sandboxId: "s1", rootDir,
                                   allowNetwork: allowNet === "1" });
  const res = yield* ex.execute(command, handle, abort.signal);
  const out = yield* ex.collect(handle);
  return { res, out };
});
let report;
try {
  const { res, out } = await Effect.runPromise(run.pipe(Effect.provide(BubblewrapSandboxExecutorLive)));
  const files = {};
  for (const f of readdirSync(out.bundlePath).sort()) files[f] = readFileSync(`${out.bundlePath}/${f}`, "utf8");
  report = { ok: true, exitCode: res.exitCode, result: files };
} catch (e) {
  const d = e?.details ?? e?.cause?.details ?? {};
  report = { ok: false, code: e?.code ?? String(e), exitCode: d.exitCode ?? null, stdout: d.stdout ?? null };
}
console.log(JSON.stringify(report));
// An aborted run leaves a timer of the runtime pending: end like a CLI does.
process.exit(0);
