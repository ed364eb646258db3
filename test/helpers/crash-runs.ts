/**
 * Drives test/fixtures/crash-crawler.js: starts it on one storage folder, SIGKILLs it on a given
 * schedule and starts it again until a start exits 0 (the final run), recording each start.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const CRASH_FIXTURE = resolve(__dirname, '..', 'fixtures', 'crash-crawler.js');

/** When a start is killed: this long after it starts crawling, or after its first handled URL. */
export interface Kill {
    after: 'start' | 'progress';
    ms: number;
}

export interface Start {
    kill?: Kill;
    handledBefore: number;
    handledAfter: number;
    exit: string;
    /** memory-storage `*.lock` folders found at this start (left by a killed start, not removed). */
    staleLocks: number;
    /** Request files memory-storage found cut short (and ignored) on this start. */
    truncatedFiles: number;
    /** Spawn to exit. */
    durationMs: number;
    /** From `CRAWL-START` to the first handled request of this start; undefined if none. */
    firstHandledMs?: number;
}

export interface CrashRunOptions {
    mode: 'throttler' | 'plain';
    /** The throttler's `queueLayout`. @default 'perDomain' */
    layout?: 'perDomain' | 'shared';
    /** The hosts the throttler throttles; the others' requests live in `inner`. @default every host */
    domains?: string[];
    /** Folder for storage and result files; must be empty or new. */
    dir: string;
    urls: string[];
    /** One entry per killed start, in order; the start after the last is the final run. */
    kills: Kill[];
    /** A final run still going after this long is killed and counted as unfinished. */
    finalLimitMs: number;
    /** A killed start that never reaches its kill is itself killed after this long. @default 45 s */
    guardMs?: number;
}

export interface CrashRunResult {
    starts: Start[];
    /** The start that was not killed on schedule. */
    final: Start;
    /** The final run exited 0 within its limit. */
    finished: boolean;
    /** Handled URLs, one entry per handling, in order. */
    handled: string[];
    failed: string[];
    storageDir: string;
}

export async function lines(file: string): Promise<string[]> {
    return existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : [];
}

interface ChildOutcome {
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
    durationMs: number;
}

/** Runs the fixture once; kills it as `kill` says (if given) or once `guardMs` has passed. */
function runChild(env: NodeJS.ProcessEnv, resultsFile: string, guardMs: number, kill?: Kill): Promise<ChildOutcome> {
    return new Promise((resolveRun, reject) => {
        const { NODE_OPTIONS: _drop, ...inherited } = process.env;
        const spawnedAt = Date.now();
        const child = spawn(process.execPath, [CRASH_FIXTURE], {
            env: { ...inherited, ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        let timer: NodeJS.Timeout | undefined;
        let poll: NodeJS.Timeout | undefined;
        const armKill = (ms: number) => {
            timer ??= setTimeout(() => child.kill('SIGKILL'), ms);
        };
        const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
        child.stdout.on('data', (chunk: Buffer) => {
            stdout += chunk.toString();
            if (!kill || !stdout.includes('CRAWL-START') || timer || poll) return;
            if (kill.after === 'start') {
                armKill(kill.ms);
                return;
            }
            const before = existsSync(resultsFile) ? statSync(resultsFile).size : 0;
            poll = setInterval(() => {
                if ((existsSync(resultsFile) ? statSync(resultsFile).size : 0) > before) {
                    clearInterval(poll);
                    armKill(kill.ms);
                }
            }, 10);
        });
        child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
        });
        child.on('error', reject);
        child.on('exit', (code, signal) => {
            clearTimeout(guard);
            clearTimeout(timer);
            clearInterval(poll);
            resolveRun({ code, signal, stdout, stderr, durationMs: Date.now() - spawnedAt });
        });
    });
}

function stamp(stdout: string, label: string): number | undefined {
    const match = new RegExp(`${label} (\\d+)`).exec(stdout);
    return match ? Number(match[1]) : undefined;
}

/** Kills and restarts the fixture on `options.dir` as scheduled, then lets the final run finish. */
export async function crashAndResume(options: CrashRunOptions): Promise<CrashRunResult> {
    const storageDir = join(options.dir, 'storage');
    const resultsFile = join(options.dir, 'handled.txt');
    const failedFile = join(options.dir, 'failed.txt');
    const urlsFile = join(options.dir, 'urls.json');
    await mkdir(options.dir, { recursive: true });
    await writeFile(urlsFile, JSON.stringify(options.urls));
    const env = {
        CRAWLEE_STORAGE_DIR: storageDir,
        CRAWLEE_PURGE_ON_START: '0',
        CRASH_URLS_FILE: urlsFile,
        CRASH_RESULTS_FILE: resultsFile,
        CRASH_FAILED_FILE: failedFile,
        CRASH_MODE: options.mode,
        CRASH_LAYOUT: options.layout ?? 'perDomain',
        ...(options.domains ? { CRASH_DOMAINS: options.domains.join(',') } : {}),
    };
    const starts: Start[] = [];
    // A start that finishes before its kill comes is the final run.
    for (let next = 0; ;) {
        const kill = options.kills[next];
        const handledBefore = (await lines(resultsFile)).length;
        const guardMs = kill ? (options.guardMs ?? 45_000) : options.finalLimitMs;
        const outcome = await runChild(env, resultsFile, guardMs, kill);
        const startedAt = stamp(outcome.stdout, 'CRAWL-START');
        const firstAt = stamp(outcome.stdout, 'FIRST-HANDLED');
        const start: Start = {
            kill,
            handledBefore,
            handledAfter: (await lines(resultsFile)).length,
            exit: outcome.signal ?? String(outcome.code),
            staleLocks: stamp(outcome.stdout, 'STALE-LOCKS') ?? 0,
            truncatedFiles: outcome.stderr.split('has invalid JSON content').length - 1,
            durationMs: outcome.durationMs,
            firstHandledMs: startedAt !== undefined && firstAt !== undefined ? firstAt - startedAt : undefined,
        };
        starts.push(start);
        if (kill && outcome.signal === 'SIGKILL') {
            next += 1;
            continue;
        }
        if (outcome.code !== 0 && outcome.signal !== 'SIGKILL')
            throw new Error(
                `the crawler (${options.mode}) exited with ${start.exit} (start ${starts.length}):\n${outcome.stderr}\n${outcome.stdout.slice(-2_000)}`,
            );
        return {
            starts,
            final: start,
            finished: outcome.code === 0,
            handled: await lines(resultsFile),
            failed: await lines(failedFile),
            storageDir,
        };
    }
}
