// One Smithers tool call through the cloister provider's session, timed:
// writeFile + exec + readFile on a running session, N times; prints the
// median and p90 in ms. Not part of `make bench` (it needs bun and the
// provider's npm packages, see tests/integration/smithers_provider.sh):
//   CLOISTER=build/cloister bun bench/provider_call.js [N]
import { createCloisterSession } from "../bindings/smithers/src/session.js";

const n = Number(process.argv[2] ?? 50);
const s = await createCloisterSession({ maxOutputBytes: 1 << 20 }, { cloister: process.env.CLOISTER });
const times = [];
try {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await s.writeFile("/workspace/in.txt", `call ${i}\n`);
    const r = await s.exec("cat in.txt > out.txt", { cwd: "/workspace", env: {}, timeoutMs: 60000 });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    await s.readFile("/workspace/out.txt");
    times.push(performance.now() - t0);
  }
} finally {
  await s.destroy();
}
times.sort((a, b) => a - b);
const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(2);
console.log(`provider tool call (writeFile+exec+readFile), n=${n}: median ${q(0.5)} ms, p90 ${q(0.9)} ms`);
