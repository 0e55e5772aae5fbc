// Smithers request + provider options -> `cloister create` arguments. Every
// option is mapped or refused: nothing is silently dropped.

const SIZE_RE = /^[0-9]+(\.[0-9]+)?[bkmgBKMG]?$/;

/**
 * @param {Record<string, any>} request  Smithers SandboxProviderRequest
 * @param {Record<string, any>} options  createCloisterSandboxProvider options
 * @returns {string[]}
 */
export function createArgs(request, options = {}) {
  const args = ["create"];
  // A <Sandbox>'s memoryLimit, cpuLimit, ports and volumes reach a provider
  // in request.config (Smithers' SandboxProviderRequest has no such
  // fields of its own); a request built by hand may carry them at the top.
  const config = request.config && typeof request.config === "object" ? request.config : {};
  const asked = (key) => request[key] ?? config[key];
  const memory = options.memoryLimit ?? asked("memoryLimit");
  const cpus = options.cpuLimit ?? asked("cpuLimit");
  const workdir = options.workdir ?? "/workspace";
  if (memory !== undefined) {
    if (!SIZE_RE.test(String(memory))) throw invalid(`memoryLimit "${memory}": expected a size like 512m`);
    args.push("--memory", String(memory));
  }
  if (cpus !== undefined) {
    if (!(Number(cpus) > 0)) throw invalid(`cpuLimit "${cpus}": expected a positive number`);
    args.push("--cpus", String(cpus));
  }
  if (options.pids !== undefined) args.push("--pids", String(options.pids));
  if (options.allowNetwork ?? request.allowNetwork) args.push("--network", "host");
  for (const p of options.ports ?? asked("ports") ?? []) {
    if (!Number.isInteger(p?.host) || !Number.isInteger(p?.container)) {
      throw invalid(`port ${JSON.stringify(p)}: expected {host, container} integers`);
    }
    args.push("--publish", `${p.host}:${p.container}`);
  }
  for (const v of options.volumes ?? asked("volumes") ?? []) {
    if (typeof v?.host !== "string" || !v.host.startsWith("/") ||
        typeof v?.container !== "string" || !v.container.startsWith("/")) {
      throw invalid(`volume ${JSON.stringify(v)}: expected absolute host and container paths`);
    }
    args.push(v.readonly ? "--ro" : "--rw", `${v.host}:${v.container}`);
  }
  if (options.seccomp !== undefined) args.push("--seccomp", String(options.seccomp));
  // The working directory is a fresh tmpfs: the request and result files
  // and whatever the command writes live there for the session's life.
  args.push("--tmpfs", workdir, "-w", workdir);
  // A run whose cleanup never comes (a crashed orchestrator) must not leave
  // its sandbox forever: idle sessions go after 10 minutes unless told
  // otherwise (0: never).
  const idle = options.idleTimeoutSecs ?? 600;
  if (!Number.isInteger(idle) || idle < 0) throw invalid(`idleTimeoutSecs "${idle}": expected whole seconds`);
  if (idle > 0) args.push("--idle-timeout", String(idle));
  for (const a of options.extraArgs ?? []) args.push(String(a));
  return args;
}

function invalid(message) {
  const e = new Error(`cloister provider: ${message}`);
  e.code = "INVALID_INPUT";
  return e;
}
