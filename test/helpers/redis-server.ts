import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a `redis-server` binary is on PATH (checked once, synchronously, so it can pick describe). */
export function haveRedisServer(): boolean {
    return spawnSync('redis-server', ['--version'], { timeout: 3_000 }).status === 0;
}

/**
 * `describe` for tests that start (and kill) a Redis of their own: skipped, with a message saying
 * why, where `redis-server` is not installed. They never touch the shared Redis other tests use.
 */
export function describeOwnRedis(name: string, body: () => void): void {
    if (haveRedisServer()) return describe(name, body);
    console.warn(`SKIPPED "${name}": no redis-server on PATH (install Redis to run it; it starts its own server).`);
    describe.skip(name, body);
}

/**
 * A `redis-server` child process on a free port of 127.0.0.1, with its data in a temporary
 * directory: `kill()` stops it as a crash would (SIGKILL), `start()` starts it again on the same
 * port and directory. With `appendonly` it keeps every write (appendfsync always) across restarts;
 * without, a restart comes back empty.
 */
export class OwnRedis {
    private child?: ChildProcess;
    private readonly dir = mkdtempSync(join(tmpdir(), 'own-redis-'));

    private constructor(
        readonly port: number,
        private readonly appendonly: boolean,
    ) {}

    static async start(options: { appendonly: boolean }): Promise<OwnRedis> {
        const redis = new OwnRedis(await freePort(), options.appendonly);
        await redis.start();
        return redis;
    }

    get url(): string {
        return `redis://127.0.0.1:${this.port}`;
    }

    /** Starts the server and resolves once it accepts connections. */
    async start(): Promise<void> {
        const persistence = this.appendonly
            ? ['--appendonly', 'yes', '--appendfsync', 'always']
            : ['--appendonly', 'no'];
        const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--dir', this.dir];
        this.child = spawn('redis-server', [...args, ...persistence], { stdio: 'ignore' });
        const deadline = Date.now() + 10_000;
        while (!(await accepts(this.port))) {
            if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start in 10 s`);
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }

    /** Kills the server (SIGKILL) and resolves once it is gone. */
    async kill(): Promise<void> {
        const child = this.child;
        this.child = undefined;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
    }

    async close(): Promise<void> {
        await this.kill();
        rmSync(this.dir, { recursive: true, force: true });
    }
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address() as AddressInfo;
            server.close(() => resolve(port));
        });
    });
}

function accepts(port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}
