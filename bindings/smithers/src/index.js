// @cloister/smithers-provider: createCloisterSandboxProvider builds a
// Smithers SandboxProvider with the provider kit on cloister sessions.
import { createCommandSandboxProvider } from "@smithers-orchestrator/sandbox/provider-kit/index";
import { createCloisterSession } from "./session.js";

export { createCloisterSession } from "./session.js";
export { createArgs } from "./policy.js";

/**
 * @param {{
 *   id?: string, command?: string, workdir?: string, env?: Record<string,string>,
 *   cleanup?: "destroy"|"keep", requestFile?: string, resultFile?: string,
 *   cloister?: string, runtimeDir?: string, memoryLimit?: string, cpuLimit?: string|number,
 *   pids?: number, allowNetwork?: boolean, ports?: {host:number,container:number}[],
 *   volumes?: {host:string,container:string,readonly?:boolean}[], seccomp?: string,
 *   timeoutMs?: number, maxOutputBytes?: number, idleTimeoutSecs?: number, extraArgs?: string[],
 * }} [options]
 */
export function createCloisterSandboxProvider(options = {}) {
  return createCommandSandboxProvider({
    id: options.id ?? "cloister",
    command: options.command,
    workdir: options.workdir ?? "/workspace",
    requestFile: options.requestFile,
    resultFile: options.resultFile,
    env: options.env,
    cleanup: options.cleanup,
    createSession: (request) => createCloisterSession(request, options),
  });
}
