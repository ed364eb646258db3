import { spawn } from 'node:child_process';

import { RESULT_PREFIX } from './worker-protocol';

/** One worker process to run. */
export interface WorkerRun<Task> {
    /** The compiled worker script (it calls `serveWorker`). */
    script: string;
    /** The environment variable the task is passed in. */
    envName: string;
    task: Task;
    /** A worker still running this long after its start is killed (it then fails, having no result). */
    killAfterMs: number;
    /** Names the worker in the error when it ends without a result. */
    name: string;
}

/**
 * Runs one worker process to its end and resolves with the result it printed. The parent's
 * `NODE_OPTIONS` are not passed on: a worker spawned under jest must not inherit its VM flags.
 */
export function runWorker<Task, Result>(run: WorkerRun<Task>): Promise<Result> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [run.script], {
            env: { ...process.env, NODE_OPTIONS: '', [run.envName]: JSON.stringify(run.task) },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        const timer = setTimeout(() => child.kill('SIGKILL'), run.killAfterMs);
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code, signal) => {
            clearTimeout(timer);
            const line = out.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
            if (line) resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as Result);
            else reject(new Error(`${run.name} ended (${signal ?? code}) without a result: ${err}`));
        });
    });
}
