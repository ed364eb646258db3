// scratch: B8's 4-process row only, N times, to compare settings quickly
const { randomBytes } = require('node:crypto');
const { startPoliteWeb } = require('@crawlee-throttling/polite-web');
const { RedisStorageClient } = require('crawlee-throttling/redis');
const { runFrontierFleet } = require('./dist/frontier-fleet');
(async () => {
  const procs = Number(process.env.P || 4), reps = Number(process.env.R || 1);
  const sites = 20, paced = 4;
  const hosts = Array.from({ length: sites }, (_, i) => (i < paced ? `paced-${i}.example` : `free-${i}.example`));
  const web = await startPoliteWeb({ sites: hosts.map((host, i) => ({ host, pages: 30, latencyMs: 1000, crossLinks: [hosts[(i + 1) % sites]], ...(i < paced ? { rate: 4, burst: 1 } : {}) })) });
  const adminClient = new RedisStorageClient({ url: 'redis://127.0.0.1:6379', prefix: 'b8exp-admin' });
  const admin = adminClient.connection;
  for (let r = 0; r < reps; r++) {
    const prefix = `b8exp-${randomBytes(4).toString('hex')}`;
    const run = await runFrontierFleet({ web, pacedHosts: hosts.slice(0, paced), pacedDelaySecs: 0.25, pacedConcurrency: 5, maxConcurrency: 10, lockSecs: 20, timeoutMs: 400000, processes: procs, redis: { url: 'redis://127.0.0.1:6379', prefix, admin }, probe: process.env.B8_PROBE === '1' });
    console.log(JSON.stringify({ procs, lock: process.env.B8_LOCK_LIMIT || 25, handled: run.distinctHandled, twice: run.handledTwice, makespan: run.makespanMs, pps: (run.pages / run.makespanMs * 1000).toFixed(1), refused: run.pacedRefusals + '/' + run.pacedRequests, cmdsPerPage: (run.redisCommands / run.pages).toFixed(1), idle: run.idleWithWorkSlotSecs }));
    await new RedisStorageClient({ client: admin, prefix }).dropAll();
  }
  await web.close(); await adminClient.teardown();
})();
