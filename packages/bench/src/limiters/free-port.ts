import { createServer, connect } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago, for servers that take their port from a config file. */
export function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const probe = createServer();
        probe.once('error', reject);
        probe.listen(0, '127.0.0.1', () => {
            const address = probe.address();
            const port = typeof address === 'object' && address ? address.port : 0;
            probe.close(() => resolve(port));
        });
    });
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const open = await new Promise<boolean>((resolve) => {
            const socket = connect(port, '127.0.0.1');
            socket.once('connect', () => {
                socket.destroy();
                resolve(true);
            });
            socket.once('error', () => resolve(false));
        });
        if (open) return;
        if (!alive()) throw new Error(`the server meant for port ${port} exited before listening`);
        if (Date.now() > deadline) throw new Error(`nothing listened on 127.0.0.1:${port} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}
