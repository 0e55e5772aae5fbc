// createCloisterSandboxProvider end to end: a real command writes the
// result, limits and policy hold inside, cleanup leaves no session.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createCloisterSandboxProvider } from "../src/index.js";

const base = { cloister: process.env.CLOISTER, runtimeDir: process.env.CLOISTER_RUNTIME_DIR };
const bin = process.env.CLOISTER ?? "cloister";
let seq = 0;

function request(overrides = {}) {
  const heartbeats = [];
  const n = seq++;
  return {
    request: {
      runId: `run-${n}`, sandboxId: `sbx-${n}`, input: { q: n }, config: {},
      rootDir: `/tmp/cl-smithers-${n}`, requestBundlePath: `/tmp/cl-smithers-${n}/req`,
      resultBundlePath: `/tmp/cl-smithers-${n}/res`, allowNetwork: false,
      maxOutputBytes: 1_000_000, toolTimeoutMs: 60_000,
      heartbeat: (d) => heartbeats.push(d ?? {}), ...overrides,
    },
    heartbeats,
  };
}

function sessions() {
  const r = spawnSync(bin, ["ls", "--json"], { env: { ...process.env, CLOISTER_RUNTIME_DIR: base.runtimeDir } });
  return JSON.parse(r.stdout.toString());
}

async function runAndClean(provider, req) {
  try {
    return await provider.run(req);
  } finally {
    await provider.cleanup(req);
  }
}

describe("createCloisterSandboxProvider", () => {
  test("the command's stdout result comes back and cleanup removes the session", async () => {
    const provider = createCloisterSandboxProvider({
      ...base,
      command: 'q=$(cat "$SMITHERS_SANDBOX_REQUEST_PATH"); echo "{\\"status\\":\\"finished\\",\\"output\\":$q}"',
    });
    const { request, heartbeats } = request_();
    const result = await runAndClean(provider, request);
    expect(result.status).toBe("finished");
    expect(result.output.input).toEqual(request.input);
    const remoteId = heartbeats.find((h) => String(h.stage).endsWith("-session-created")).remoteId;
    expect(sessions().some((s) => s.id === remoteId)).toBe(false);
  });

  // Limits need a cgroup: root, or a delegated cgroup v2 tree.
  test.if(process.env.CL_LIMITS === "1")("a memory limit holds: a hog fails the run", async () => {
    const provider = createCloisterSandboxProvider({
      ...base, memoryLimit: "32m",
      // the shell itself grows past the limit and is OOM-killed
      command: "v=$(head -c 200000000 /dev/zero | tr '\\0' x); echo '{\"status\":\"finished\"}'",
    });
    const { request } = request_();
    await expect(runAndClean(provider, request)).rejects.toThrow(/exited with code (137|9)/);
  });

  test("network is denied unless allowNetwork", async () => {
    const cmd = 'n=$(tail -n +3 /proc/net/dev | wc -l); echo "{\\"status\\":\\"finished\\",\\"output\\":$n}"';
    const denied = await runAndClean(createCloisterSandboxProvider({ ...base, command: cmd }), request_().request);
    expect(denied.output).toBe(1); // loopback only
    const allowed = await runAndClean(createCloisterSandboxProvider({ ...base, command: cmd }),
      request_({ allowNetwork: true }).request);
    expect(allowed.output).toBeGreaterThan(1);
  });

  test("toolTimeoutMs kills the command", async () => {
    const provider = createCloisterSandboxProvider({ ...base, command: "sleep 100" });
    const { request } = request_({ toolTimeoutMs: 300 });
    await expect(runAndClean(provider, request)).rejects.toThrow(/exited with code 124/);
  });

  test("bad options are refused, not ignored", async () => {
    const provider = createCloisterSandboxProvider({ ...base, memoryLimit: "lots" });
    await expect(provider.run(request_().request)).rejects.toThrow(/memoryLimit/);
  });
});

function request_(o) {
  return request(o);
}
