import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The crawler process fixture (over the built package: `npm run build` first). */
export const REDIS_CRAWLER = join(__dirname, '..', 'fixtures', 'redis-clock-crawler.js');

/** What one crawler process reported. */
export interface ProcessResult {
    handled: number;
    failed: number;
    /** When each request left the process (its navigation hook), epoch ms. */
    sent: { url: string; at: number }[];
    /** Each domain's pace at the end under adaptive pacing, requests per second (fixtures that report it). */
    paces?: Record<string, number | undefined>;
    /** Each quota spend Redis granted: its key and the end of the window it counted in (epoch ms). */
    spends?: { key: string; windowEndsAt: number }[];
    /** What the process logged (the throttler's warnings). */
    stderr: string;
}

/** Runs one crawler process of `fixture` to its end; rejects when it exits with an error. */
export function crawlerProcess(env: Record<string, string>, fixture = REDIS_CRAWLER): Promise<ProcessResult> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [fixture], {
            env: { ...process.env, NODE_OPTIONS: '', ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => {
            const line = out.split('\n').find((l) => l.startsWith('RESULT '));
            if (code !== 0 || !line) reject(new Error(`crawler process exited with ${code}: ${err || out}`));
            else resolve({ ...(JSON.parse(line.slice('RESULT '.length)) as ProcessResult), stderr: err + out });
        });
    });
}
