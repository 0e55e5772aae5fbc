// Smithers' own provider contract suite against real cloister sessions.
// The suite's handler stands for the command the provider runs: the test
// runs a real command inside the session (it records the environment it
// got), reads the request file the kit wrote through the session, gives
// both to the handler, and writes the handler's result into the session
// for the kit to read back. Every step goes through cloister
// create/exec/cp/rm.
import { createCommandSandboxProvider, createSandboxProviderContractSuite } from "@smithers-orchestrator/sandbox/provider-kit/index";
import { afterAll } from "bun:test";
import { createCloisterSession } from "../src/index.js";

const base = { cloister: process.env.CLOISTER, runtimeDir: process.env.CLOISTER_RUNTIME_DIR };
const ENV_DUMP = "/tmp/.contract-env";

function parseEnv(text) {
  const env = {};
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

// Most of the suite's tests never call cleanup (and one keeps its session
// on purpose): what they leave is removed here, and the shell wrapper then
// checks that nothing at all is left.
const made = [];
afterAll(async () => {
  for (const s of made) await s.destroy();
});

createSandboxProviderContractSuite({
  name: "cloister provider (provider kit contract)",
  expectedProviderId: "cloister",
  createProvider(handler, providerOptions = {}) {
    const { onDestroy, ...kitOptions } = providerOptions;
    return createCommandSandboxProvider({
      id: "cloister",
      command: `env -0 > ${ENV_DUMP}`,
      ...kitOptions,
      async createSession(request) {
        const s = await createCloisterSession(request, base);
        made.push(s);
        return {
          remoteId: s.remoteId,
          writeFile: s.writeFile,
          readFile: s.readFile,
          async exec(command, opts) {
            const res = await s.exec(command, opts);
            if (res.exitCode !== 0) return res;
            const env = parseEnv(await s.readFile(ENV_DUMP));
            const seen = JSON.parse(await s.readFile(env.SMITHERS_SANDBOX_REQUEST_PATH));
            const result = await handler({ command, request: seen, files: new Map(), env });
            await s.writeFile(env.SMITHERS_SANDBOX_RESULT_PATH, JSON.stringify(result));
            return res;
          },
          async destroy() {
            onDestroy?.();
            await s.destroy();
          },
        };
      },
    });
  },
});
