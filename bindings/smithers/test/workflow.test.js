/** @jsxImportSource smithers-orchestrator */
// createCloisterSandboxProvider inside a real Smithers workflow: runWorkflow
// renders a <Sandbox provider={...}> whose command runs in a cloister
// session, with Smithers' own SQLite store in a temp dir. Each case checks
// what Smithers reports (run status, error code and message, the sandbox's
// row) and that nothing of the session is left afterwards.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { closeSingleRunnerRuntime, createSmithers, runWorkflow } from "smithers-orchestrator";
import { z } from "zod";
import { createCloisterSandboxProvider } from "../src/index.js";

const bin = process.env.CLOISTER ?? "cloister";
const runtimeDir = process.env.CLOISTER_RUNTIME_DIR;
const mark = process.env.WF_MARK ?? "wf-test";
// Set in the caller's environment it would make Smithers' memory layer
// talk to a Hindsight server; this test has none.
delete process.env.HINDSIGHT_URL;

const limits = process.env.CL_LIMITS === "1" ||
  spawnSync(bin, ["run", "--memory", "32m", "--", "true"], { stdio: "ignore" }).status === 0;

// bun's 5 s per test is too short for a workflow on a loaded machine.
setDefaultTimeout(180_000);

const roots = [];
afterAll(async () => {
  await closeSingleRunnerRuntime();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function sessions() {
  const r = spawnSync(bin, ["ls", "--json"], { env: { ...process.env, CLOISTER_RUNTIME_DIR: runtimeDir } });
  return JSON.parse(r.stdout.toString() || "null");
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== "ESRCH";
  }
}

async function until(what, ok, ms = 60_000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`still not true after ${ms} ms: ${what}`);
    await Bun.sleep(20);
  }
}

// One workflow, one <Sandbox>: the provider's command prints the result
// JSON. The session-created heartbeat of the provider kit names the
// session; its pids are read from `cloister ls` right then, so the test can
// tell afterwards that they are gone.
async function runSandbox({ command, provider = {}, sandbox = {} }) {
  const root = mkdtempSync(join(tmpdir(), "cl-smithers-wf-"));
  roots.push(root);
  const api = createSmithers(
    { input: z.object({}), output: z.object({ reached: z.string() }) },
    { dbPath: join(root, "smithers.db") },
  );
  const child = createSmithers({ input: z.object({}), output: z.object({ reached: z.string() }) },
    { dbPath: join(root, "child.db") });
  const childWorkflow = child.smithers(() => (
    <child.Workflow name="cloister-child">
      <child.Task id="noop" output={child.outputs.output}>{{ reached: "" }}</child.Task>
    </child.Workflow>
  ));
  const inner = createCloisterSandboxProvider({ cloister: bin, runtimeDir, command, ...provider });
  const seen = { ids: [], pids: [] };
  const cloister = {
    ...inner,
    run: (request) => inner.run({
      ...request,
      heartbeat(data) {
        if (String(data?.stage).endsWith("-session-created")) {
          seen.ids.push(data.remoteId);
          const s = (sessions() ?? []).find((x) => x.id === data.remoteId);
          if (s) seen.pids.push(s.supervisor_pid, s.init_pid);
        }
        request.heartbeat(data);
      },
    }),
  };
  const workflow = api.smithers(() => (
    <api.Workflow name="cloister-workflow">
      <api.Sandbox id="box" provider={cloister} workflow={childWorkflow} input={{}}
        output={api.outputs.output} retries={0} {...sandbox} />
    </api.Workflow>
  ));
  const result = await Effect.runPromise(runWorkflow(workflow, { input: {}, rootDir: root }));
  return { result, rows: () => sandboxRows(root, result.runId), seen };
}

// The sandbox's row in Smithers' own store (real SQLite, read only).
function sandboxRows(root, runId) {
  const db = new Database(join(root, "smithers.db"), { readonly: true });
  try {
    return db.query("SELECT sandbox_id AS id, status FROM _smithers_sandboxes WHERE run_id = ?").all(runId);
  } finally {
    db.close();
  }
}

// After the workflow: no session, its runtime dir and processes gone, no
// status file of the provider's left in TMPDIR.
async function expectClean(seen) {
  expect(seen.ids.length).toBe(1);
  await until("no cloister session left", () => JSON.stringify(sessions()) === "[]");
  for (const id of seen.ids) expect(existsSync(join(runtimeDir, id))).toBe(false);
  expect(seen.pids.length).toBe(2);
  await until(`session processes ${seen.pids} gone`, () => seen.pids.every((p) => !alive(p)));
  expect(readdirSync(tmpdir()).filter((n) => n.startsWith("cloister-provider-"))).toEqual([]);
}

function result(json) {
  return `echo '${JSON.stringify({ status: "finished", output: json })}'`;
}

describe("<Sandbox provider={createCloisterSandboxProvider()}> in runWorkflow", () => {
  test("a plain command finishes and its output is the task's", async () => {
    const { result: r, rows, seen } = await runSandbox({ command: `: ${mark}; ${result({ reached: "yes" })}` });
    expect(r.status).toBe("finished");
    expect(r.output).toEqual([expect.objectContaining({ nodeId: "box", reached: "yes" })]);
    expect(rows()).toEqual([{ id: "box", status: "finished" }]);
    await expectClean(seen);
  });

  // Limits need a cgroup: root (CL_LIMITS=1, where they must work), or a
  // delegated cgroup v2 tree; elsewhere the limit must fail the run.
  test.if(limits)("<Sandbox memoryLimit>: a memory hog fails the sandbox, OOM", async () => {
    const { result: r, rows, seen } = await runSandbox({
      // the shell itself grows past the limit and is OOM-killed
      command: `: ${mark}; v=$(head -c 200000000 /dev/zero | tr '\\0' x); ${result({ reached: "hog survived" })}`,
      sandbox: { memoryLimit: "32m" },
    });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("SESSION_ERROR"); // "Task failed: box"
    expect(r.error?.cause?.code).toBe("SANDBOX_EXECUTION_FAILED");
    expect(r.error?.cause?.message).toMatch(/exited with code 137: command killed: out of memory \(OOM, memory limit 32m\)/);
    expect(rows()).toEqual([{ id: "box", status: "failed" }]);
    await expectClean(seen);
  });

  test.if(!limits)("<Sandbox memoryLimit> the host cannot apply fails the run, not ignored", async () => {
    const { result: r, rows, seen } = await runSandbox({ command: `: ${mark}; ${result({ reached: "unlimited" })}`,
      sandbox: { memoryLimit: "32m" } });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("SESSION_ERROR");
    expect(r.error?.cause?.message).toMatch(/cloister create failed \(exit 125\): .*memory/);
    expect(rows()).toEqual([{ id: "box", status: "failed" }]);
    expect(seen.ids).toEqual([]);
    expect(JSON.stringify(sessions())).toBe("[]");
  });

  describe("network: a listener on the host's 127.0.0.1", () => {
    const server = createServer((sock) => sock.end("hello-from-host\n"));
    let connections = 0;
    server.on("connection", () => connections++);
    const listening = new Promise((ok) => server.listen(0, "127.0.0.1", ok));
    afterAll(() => server.close());
    // bash's /dev/tcp: whatever the line read is the output ("" if none)
    const probe = () => `: ${mark}; l=$(/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/${server.address().port} && head -1 <&3' 2>/dev/null); ` +
      `echo "{\\"status\\":\\"finished\\",\\"output\\":{\\"reached\\":\\"$l\\"}}"`;

    test("is not reachable by default", async () => {
      await listening;
      const before = connections;
      const { result: r, seen } = await runSandbox({ command: probe() });
      expect(r.status).toBe("finished");
      expect(r.output).toEqual([expect.objectContaining({ nodeId: "box", reached: "" })]);
      expect(connections).toBe(before);
      await expectClean(seen);
    });

    test("is reached with <Sandbox allowNetwork>", async () => {
      await listening;
      const before = connections;
      const { result: r, seen } = await runSandbox({ command: probe(), sandbox: { allowNetwork: true } });
      expect(r.status).toBe("finished");
      expect(r.output).toEqual([expect.objectContaining({ nodeId: "box", reached: "hello-from-host" })]);
      expect(connections).toBe(before + 1);
      await expectClean(seen);
    });
  });

  test("<Sandbox timeoutMs>: Smithers times the task out, the provider's timeout kills the command", async () => {
    const t0 = Date.now();
    const { result: r, rows, seen } = await runSandbox({
      command: `: ${mark}; sleep 120; ${result({ reached: "slept" })}`,
      provider: { timeoutMs: 3000 },
      sandbox: { timeoutMs: 1000 },
    });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("SESSION_ERROR");
    expect(r.error?.cause?.code).toBe("TASK_TIMEOUT");
    expect(r.error?.cause?.message).toMatch(/^Compute callback timed out after 1000ms/);
    // Smithers does not abort a timed-out task's compute: the sandbox
    // command goes when cloister's exec --timeout kills it, and then the
    // provider's cleanup removes the session.
    await expectClean(seen);
    expect(Date.now() - t0).toBeLessThan(60_000);
    // ...and the sandbox's row, written when its compute ended, says so.
    expect(rows()).toEqual([{ id: "box", status: "failed" }]);
  });

  test("the provider's timeoutMs alone: the run fails naming the timeout", async () => {
    const { result: r, rows, seen } = await runSandbox({
      command: `: ${mark}; sleep 120; ${result({ reached: "slept" })}`,
      provider: { timeoutMs: 1000 },
    });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("SESSION_ERROR");
    expect(r.error?.cause?.code).toBe("SANDBOX_EXECUTION_FAILED");
    expect(r.error?.cause?.message).toMatch(/exited with code 124: command timed out after 1000 ms\n/);
    expect(rows()).toEqual([{ id: "box", status: "failed" }]);
    await expectClean(seen);
  });
});
