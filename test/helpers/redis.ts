import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

import { Redis } from 'ioredis';

/** The Redis the Redis tests use: `REDIS_URL`, else the local default. */
export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

const PROBE = `
const net = require('node:net');
const u = new URL(process.argv[1]);
const s = net.connect(Number(u.port || 6379), u.hostname.replace(/^\\[|\\]$/g, ''));
s.setTimeout(1000, () => process.exit(1));
s.on('error', () => process.exit(1));
s.on('connect', () => s.write('PING\\r\\n'));
s.on('data', (d) => process.exit(/^[+-]/.test(String(d)) ? 0 : 1));
`;

/** Whether something answering like Redis listens at `url` (checked once, synchronously, so it can pick describe). */
function reachable(url: string): boolean {
    const probe = spawnSync(process.execPath, ['-e', PROBE, url], { timeout: 3_000 });
    return probe.status === 0;
}

let known: boolean | undefined;

/**
 * `describe` for tests that need a real Redis. Without one: under CI (`CI` set) the block fails
 * with a message saying so; elsewhere it is skipped and a console message says how to run it.
 */
export function describeRedis(name: string, body: () => void): void {
    known ??= reachable(REDIS_URL);
    if (known) return describe(name, body);
    const how = `Start redis-server on 127.0.0.1:6379, or set REDIS_URL=redis://host:port.`;
    if (process.env.CI) {
        return describe(name, () => {
            it('reaches Redis', () => {
                throw new Error(`No Redis at ${REDIS_URL}: CI must run the Redis tests. ${how}`);
            });
        });
    }
    console.warn(`SKIPPED "${name}": no Redis at ${REDIS_URL}. ${how}`);
    describe.skip(name, body);
}

/** A key prefix no other test (or earlier run) uses. */
export function uniquePrefix(label: string): string {
    return `test:${label}:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/** A plain connection to the test Redis, for checks and clean-up. */
export function testRedis(): Redis {
    return new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
}

/** Deletes every key under `prefix` (they all start with `{prefix`). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
    let cursor = '0';
    do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
    } while (cursor !== '0');
}

/**
 * A TCP proxy on 127.0.0.1 in front of Redis, to cut the connection as a network fault would:
 * `drop()` destroys every connection and stops listening (the server is gone); `silence()` keeps
 * connections open but forwards nothing (the server hangs).
 */
export class RedisProxy {
    private readonly server: net.Server;
    private readonly sockets = new Set<net.Socket>();
    private silent = false;
    private port = 0;

    private constructor(private readonly target: URL) {
        this.server = net.createServer((client) => this.pipe(client));
    }

    static async start(url = REDIS_URL): Promise<RedisProxy> {
        const proxy = new RedisProxy(new URL(url));
        await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
        proxy.port = (proxy.server.address() as AddressInfo).port;
        return proxy;
    }

    /** The proxy's URL (the target's credentials and database kept). */
    get url(): string {
        const u = new URL(this.target.href);
        u.hostname = '127.0.0.1';
        u.port = String(this.port);
        return u.href;
    }

    silence(): void {
        this.silent = true;
    }

    drop(): void {
        if (this.server.listening) this.server.close();
        for (const socket of this.sockets) socket.destroy();
    }

    private pipe(client: net.Socket): void {
        const upstream = net.connect(Number(this.target.port || 6379), this.target.hostname.replace(/^\[|\]$/g, ''));
        for (const s of [client, upstream]) {
            this.sockets.add(s);
            s.on('error', () => s.destroy());
            s.on('close', () => {
                this.sockets.delete(s);
                client.destroy();
                upstream.destroy();
            });
        }
        client.on('data', (d) => this.silent || upstream.write(d));
        upstream.on('data', (d) => this.silent || client.write(d));
    }
}
