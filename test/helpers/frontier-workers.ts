import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The shared-frontier crawler process (over the built package: `npm run build` first). */
export const FRONTIER_CRAWLER = join(__dirname, '..', 'fixtures', 'redis-storage-crawler.js');

/** One crawler process on the shared frontier, as seen from its output so far. */
export interface FrontierWorker {
    label: string;
    child: ChildProcess;
    /** Pages whose handler started here (held by this process from then until marked handled). */
    started: string[];
    /** Pages whose handler finished here. */
    handled: string[];
    /** Resolves when the process exits: its exit code (null when killed) and what it logged. */
    exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; log: string }>;
}

/** Starts one process of the fixture with `env` on top of the test's environment. */
export function startFrontierWorker(label: string, env: Record<string, string>): FrontierWorker {
    const child = spawn(process.execPath, [FRONTIER_CRAWLER], {
        env: { ...process.env, NODE_OPTIONS: '', CRAWLER_PROCESS: label, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker: FrontierWorker = { label, child, started: [], handled: [], exited: undefined as never };
    let rest = '';
    let log = '';
    child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
            if (line.startsWith('STARTED ')) worker.started.push(line.slice(8));
            else if (line.startsWith('HANDLED ')) worker.handled.push(line.slice(8));
            else log += `${line}\n`;
        }
    });
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    worker.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, log })));
    return worker;
}

/** Resolves once `worker` has handled `count` pages (or rejects when it exits first). */
export function whenHandled(worker: FrontierWorker, count: number): Promise<void> {
    return new Promise((resolve, reject) => {
        const check = () => {
            if (worker.handled.length >= count) {
                clearInterval(timer);
                resolve();
            }
        };
        const timer = setInterval(check, 20);
        void worker.exited.then(({ log }) => {
            clearInterval(timer);
            if (worker.handled.length >= count) resolve();
            else reject(new Error(`worker ${worker.label} exited after ${worker.handled.length} pages: ${log}`));
        });
    });
}

/** How many times each URL appears across `lists`. */
export function countUrls(...lists: string[][]): Map<string, number> {
    const counts = new Map<string, number>();
    for (const list of lists) for (const url of list) counts.set(url, (counts.get(url) ?? 0) + 1);
    return counts;
}
