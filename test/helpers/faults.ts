import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import type { Configuration, IRequestManager } from '@crawlee/core';

import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';

/** A queue call that misbehaves once: it throws, or it never settles. */
export interface QueueFault {
    method: 'fetchNextRequest' | 'markRequestHandled' | 'reclaimRequest' | 'addRequest';
    kind: 'throw' | 'hang';
    /** Which call (1-based, across every domain queue) misbehaves. @default 1 */
    nth?: number;
}

/** The methods a fault on `method` covers (adding comes in two forms). */
function methodsOf(fault: QueueFault): string[] {
    return fault.method === 'addRequest' ? ['addRequest', 'addRequestsBatched'] : [fault.method];
}

/**
 * A `requestManagerOpener` whose domain queues are the real ones, except that the `nth` call of the
 * faulty method (across every domain queue) throws or hangs. `fired` tells whether the fault ran.
 */
export function faultyOpener(fault: QueueFault) {
    const state = { fired: 0, calls: 0 };
    const methods = methodsOf(fault);
    const nth = fault.nth ?? 1;
    const opener = async (name: string, options: { config?: Configuration }): Promise<IRequestManager> => {
        const queue = await DomainRequestQueue.open(name, options);
        return new Proxy(queue, {
            get(target, prop, receiver) {
                const value = Reflect.get(target, prop, receiver);
                if (typeof value !== 'function') return value;
                if (typeof prop === 'string' && methods.includes(prop) && state.fired === 0) {
                    return (...args: unknown[]) => {
                        state.calls += 1;
                        if (state.fired > 0 || state.calls !== nth) return value.apply(target, args);
                        state.fired += 1;
                        if (fault.kind === 'hang') return new Promise(() => undefined);
                        return Promise.reject(new Error(`injected storage fault in ${prop}`));
                    };
                }
                return value.bind(target);
            },
            set(target, prop, value) {
                return Reflect.set(target, prop, value);
            },
        }) as IRequestManager;
    };
    return { opener, state };
}

/**
 * A `requestManagerOpener` whose domain queues are real, except that the `nth` storage write of a
 * batch (`addRequests`, which Crawlee's `addRequestsBatched` calls for each batch, in the background
 * ones too) throws or hangs, once across every domain queue. `release()` lets a hung write go on.
 */
export function faultyBatchWrites(kind: 'throw' | 'hang', nth: number) {
    const state = { fired: 0, calls: 0 };
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
        release = resolve;
    });
    const opener = async (name: string, options: { config?: Configuration }): Promise<IRequestManager> => {
        const queue = await DomainRequestQueue.open(name, options);
        const write = queue.addRequests.bind(queue);
        queue.addRequests = async (...args: Parameters<typeof write>) => {
            state.calls += 1;
            if (state.fired > 0 || state.calls !== nth) return write(...args);
            state.fired += 1;
            if (kind === 'throw') throw new Error('injected storage fault in a batch write');
            await released;
            return write(...args);
        };
        return queue;
    };
    return { opener, state, release: () => release() };
}

/** A bare server: `onRequest` decides each answer (or that there is none). */
export interface RawServer {
    origin: string;
    url(path: string): string;
    /** Paths in arrival order. */
    readonly paths: string[];
    close(): Promise<void>;
}

/**
 * Starts a server on `host` whose handler may answer, hang or destroy the socket. Hung requests are
 * cut when the server closes.
 */
export async function startRawServer(
    host: string,
    onRequest: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<RawServer> {
    const paths: string[] = [];
    const sockets = new Set<Socket>();
    const server = http.createServer((req, res) => {
        paths.push(req.url ?? '');
        onRequest(req, res);
    });
    server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const { port } = server.address() as AddressInfo;
    const origin = `http://${host}:${port}`;
    return {
        origin,
        url: (path) => `${origin}${path}`,
        paths,
        close: () =>
            new Promise<void>((resolve) => {
                for (const socket of sockets) socket.destroy();
                server.close(() => resolve());
            }),
    };
}

/** Answers 404 to robots.txt and a small page otherwise. */
export function answerPage(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.url === '/robots.txt') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
        return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>${req.url}</title></head><body>${req.url}</body></html>`);
}

/** Resolves with `promise`, or rejects naming `what` once `ms` passed. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    });
    try {
        return await Promise.race([promise, bound]);
    } finally {
        clearTimeout(timer);
    }
}
