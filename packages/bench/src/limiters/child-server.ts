import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { waitForPort } from './free-port';

/** A server binary running as a child of this process, with its files in `dir`. */
export interface ChildServer {
    readonly port: number;
    readonly pid: number;
    /** Stops the child (SIGTERM, then SIGKILL after 3 s) and removes `dir`. */
    close(): Promise<void>;
}

/**
 * Spawns `binary args` in the foreground, waits until it listens on `port`, and names the log file in
 * `dir` in the error when it does not. The child is killed when this process exits.
 */
export async function startChildServer(
    binary: string,
    args: string[],
    port: number,
    dir: string,
    logName: string,
): Promise<ChildServer> {
    const child: ChildProcess = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-4000)));
    let exited = false;
    const exit = new Promise<void>((resolve) =>
        child.once('exit', () => {
            exited = true;
            resolve();
        }),
    );
    const killOnExit = (): void => void child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const close = async (): Promise<void> => {
        process.off('exit', killOnExit);
        if (!exited) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
            await exit;
            clearTimeout(timer);
        }
        rmSync(dir, { recursive: true, force: true });
    };
    try {
        await waitForPort(port, 10_000, () => !exited);
    } catch (error) {
        let log = '';
        try {
            log = readFileSync(join(dir, logName), 'utf8').slice(-2000);
        } catch {
            // no log written
        }
        await close();
        throw new Error(`${binary} did not start: ${(error as Error).message}\n${stderr}${log}`);
    }
    return { port, pid: child.pid ?? 0, close };
}
