import { spawn } from 'node:child_process';
import { join } from 'node:path';

import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import type { Redis } from 'ioredis';

import { FRONTIER_WORKER_ENV, type FrontierResult, type FrontierTask } from './frontier-crawler-process';
import type { FrontierProbeResult } from './frontier-process-probe';
import { refusalGaps, type RefusalGaps } from './frontier-refusal-gaps';

/** The compiled worker (build first). */
const WORKER = join(__dirname, '..', 'dist', 'frontier-crawler-process.js');

/** One run of B8: N processes crawling the link graph from its roots, and what they and the sites saw. */
export interface FrontierRun {
    processes: number;
    storage: 'redis' | 'memory';
    /** Pages of the graph, and how many distinct ones were handled (by a survivor or before a kill). */
    pages: number;
    distinctHandled: number;
    /** Handlings beyond the first of each page, all processes together. */
    handledTwice: number;
    /** Of those, pages the killed process had started (the only ones allowed). */
    handledTwiceHeld: number;
    /** Requests and refusals on the paced sites (the known paces). */
    pacedRequests: number;
    pacedRefusals: number;
    /** First to last page arrival, ms. */
    makespanMs: number;
    /** CPU ms of the crawler processes (survivors), and of Redis over the run. */
    cpuMs: number;
    redisCpuMs: number;
    /** Redis commands over the run (INFO commandstats, script-internal calls included), and EVALSHA calls. */
    redisCommands: number;
    redisScripts: number;
    /** Whether a process was SIGKILLed mid-crawl. */
    killed: boolean;
    /** With `probe`: each process's probe, and the fleet's slot-seconds left idle while Redis held unlocked work. */
    probes?: (FrontierProbeResult | undefined)[];
    idleWithWorkSlotSecs?: IdleSlots;
    /** With the probe: the refused arrivals at paced sites against the accepted ones before them. */
    refusalGaps?: RefusalGaps;
}

export interface FrontierFleetOptions {
    web: PoliteWeb;
    pacedHosts: string[];
    pacedDelaySecs: number;
    pacedConcurrency: number;
    processes: number;
    maxConcurrency: number;
    lockSecs: number;
    /** Share one frontier in this Redis; without it one process runs on memory-storage. */
    redis?: { url: string; prefix: string; admin: Redis };
    /** SIGKILL process 1 once it has handled this many pages. */
    killAfterPages?: number;
    timeoutMs: number;
    /** Time the processes' storage and clock calls, and sample the fleet's idle slots (frontier-probe.ts). */
    probe?: boolean;
}

interface Spawned {
    started: string[];
    handled: string[];
    result: Promise<FrontierResult | undefined>;
    kill(): void;
}

function spawnWorker(task: FrontierTask, timeoutMs: number): Spawned {
    const child = spawn(process.execPath, [WORKER], {
        env: { ...process.env, NODE_OPTIONS: '', [FRONTIER_WORKER_ENV]: JSON.stringify(task) },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const spawned: Spawned = {
        started: [],
        handled: [],
        result: undefined as never,
        kill: () => child.kill('SIGKILL'),
    };
    let rest = '';
    let result: FrontierResult | undefined;
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
            if (line.startsWith('STARTED ')) spawned.started.push(line.slice(8));
            else if (line.startsWith('HANDLED ')) spawned.handled.push(line.slice(8));
            else if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as FrontierResult;
        }
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    spawned.result = new Promise((resolve, reject) =>
        child.on('close', (code, signal) => {
            clearTimeout(timer);
            if (result || signal === 'SIGKILL') resolve(result);
            else reject(new Error(`B8 crawler process ${task.label} ended (${code}) without a result: ${err}`));
        }),
    );
    return spawned;
}

/** Redis's own CPU ms and command counts so far (INFO). */
async function redisCounters(admin: Redis): Promise<{ cpuMs: number; commands: number; scripts: number }> {
    const info = await admin.info('all');
    const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
    let commands = 0;
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') commands += Number(m[2]);
    return {
        cpuMs: (num(/used_cpu_user:([\d.]+)/) + num(/used_cpu_sys:([\d.]+)/)) * 1000,
        commands,
        scripts: num(/^cmdstat_evalsha:calls=(\d+)/m) + num(/^cmdstat_eval:calls=(\d+)/m),
    };
}

/** Requests waiting unlocked in the prefix's queues (the order zsets), and those locked (the locks zsets). */
async function queuedInRedis(
    redis: NonNullable<FrontierFleetOptions['redis']>,
): Promise<{ pending: number; locked: number }> {
    const ids = Object.keys(await redis.admin.hgetall(`{${redis.prefix}:rq}:ids`));
    if (ids.length === 0) return { pending: 0, locked: 0 };
    const pipeline = redis.admin.pipeline();
    for (const id of ids) pipeline.zcard(`{${redis.prefix}:rq:${id}}:order`).zcard(`{${redis.prefix}:rq:${id}}:locks`);
    const answers = ((await pipeline.exec()) ?? []).map(([, n]) => Number(n ?? 0));
    const sum = (parity: number) => answers.filter((_, i) => i % 2 === parity).reduce((t, n) => t + n, 0);
    return { pending: sum(0), locked: sum(1) };
}

/**
 * Every 100 ms until stopped: the slots free across the fleet (processes × maxConcurrency minus what
 * the sites have in flight) while Redis holds unlocked requests; answers the slot-seconds so left idle.
 */
function sampleIdleWithWork(o: FrontierFleetOptions): () => Promise<IdleSlots> {
    const idle: IdleSlots = { withPending: 0, lockedNotSent: 0, inFlight: 0 };
    let busy = false;
    const timer = setInterval(() => {
        if (busy || !o.redis) return;
        busy = true;
        void queuedInRedis(o.redis)
            .then(({ pending, locked }) => {
                const inFlight = o.web.sites.reduce((t, s) => t + o.web.inFlight(s.host), 0);
                const free = Math.max(0, o.processes * o.maxConcurrency - inFlight);
                idle.withPending += Math.min(pending, free) * 0.1;
                idle.lockedNotSent += Math.max(0, locked - inFlight) * 0.1;
                idle.inFlight += inFlight * 0.1;
            })
            .finally(() => (busy = false));
    }, 100);
    return async () => {
        clearInterval(timer);
        const round = (n: number) => Math.round(n * 10) / 10;
        return {
            withPending: round(idle.withPending),
            lockedNotSent: round(idle.lockedNotSent),
            inFlight: round(idle.inFlight),
        };
    };
}

/** Slot-seconds over a run: free slots while Redis held unlocked work; requests locked but not at a site; at the sites. */
export interface IdleSlots {
    withPending: number;
    lockedNotSent: number;
    inFlight: number;
}

/** The pages of the graph: each site's root and its pages. */
function graphPages(web: PoliteWeb): string[] {
    return web.sites.flatMap((s) => [
        web.url(s.host, '/'),
        ...Array.from({ length: s.pages }, (_, i) => web.url(s.host, `/page/${i}`)),
    ]);
}

/** Runs one fleet to its end (the killed process aside) and scores it. */
export async function runFrontierFleet(o: FrontierFleetOptions): Promise<FrontierRun> {
    o.web.reset();
    const roots = o.web.sites.map((s) => o.web.url(s.host, '/'));
    const before = o.redis ? await redisCounters(o.redis.admin) : undefined;
    const workers = Array.from({ length: o.processes }, (_, p) =>
        spawnWorker(
            {
                urls: roots,
                proxyUrl: o.web.proxyUrl,
                pacedHosts: o.pacedHosts,
                pacedDelaySecs: o.pacedDelaySecs,
                pacedConcurrency: o.pacedConcurrency,
                maxConcurrency: o.maxConcurrency,
                sites: o.web.sites.length,
                lockSecs: o.lockSecs,
                label: String(p + 1),
                ...(o.probe ? { probe: true } : {}),
                ...(o.redis ? { redis: { url: o.redis.url, prefix: o.redis.prefix } } : {}),
            },
            o.timeoutMs,
        ),
    );
    const stopSampling = o.probe && o.redis ? sampleIdleWithWork(o) : undefined;
    let killed = false;
    let watch: ReturnType<typeof setInterval> | undefined;
    if (o.killAfterPages !== undefined) {
        const doomed = workers[0];
        watch = setInterval(() => {
            if (doomed.handled.length < o.killAfterPages!) return;
            clearInterval(watch);
            killed = true;
            doomed.kill();
        }, 20);
    }
    const results = await Promise.all(workers.map((w) => w.result)).finally(() => clearInterval(watch));
    const idleWithWorkSlotSecs = await stopSampling?.();
    const after = o.redis ? await redisCounters(o.redis.admin) : undefined;
    const counts = new Map<string, number>();
    for (const w of workers) for (const url of w.handled) counts.set(url, (counts.get(url) ?? 0) + 1);
    const held = new Set(killed ? workers[0].started : []);
    let handledTwice = 0;
    let handledTwiceHeld = 0;
    for (const [url, n] of counts)
        if (n > 1) {
            handledTwice += n - 1;
            if (held.has(url)) handledTwiceHeld += n - 1;
        }
    const score = o.web.score();
    const paced = score.sites.filter((s) => o.pacedHosts.includes(s.host));
    return {
        processes: o.processes,
        storage: o.redis ? 'redis' : 'memory',
        pages: graphPages(o.web).length,
        distinctHandled: counts.size,
        handledTwice,
        handledTwiceHeld,
        pacedRequests: paced.reduce((t, s) => t + s.requests, 0),
        pacedRefusals: paced.reduce((t, s) => t + s.refusals, 0),
        makespanMs: score.makespanMs,
        cpuMs: results.reduce((t, r) => t + (r?.cpuMs ?? 0), 0),
        redisCpuMs: before && after ? Math.round(after.cpuMs - before.cpuMs) : 0,
        redisCommands: before && after ? after.commands - before.commands : 0,
        redisScripts: before && after ? after.scripts - before.scripts : 0,
        killed,
        ...(o.probe
            ? {
                  probes: results.map((r) => r?.probe),
                  idleWithWorkSlotSecs,
                  refusalGaps: refusalGaps(o.web.log, o.pacedHosts, o.pacedDelaySecs * 1000),
              }
            : {}),
    };
}
