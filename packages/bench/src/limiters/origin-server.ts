import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running origin. */
export interface OriginServer {
    readonly port: number;
    close(): Promise<void>;
}

/**
 * The pages behind a limiter: any path answers a small HTML page after `latencyMs`, each request on
 * its own timer (no queue), so a limiter in front holds a connection for that long.
 */
export async function startOrigin(latencyMs: number): Promise<OriginServer> {
    const server: Server = createServer((req, res) => {
        const body = `<!doctype html><html><head><title>${req.url ?? '/'}</title></head><body>page</body></html>\n`;
        const send = (): void => {
            if (res.destroyed) return;
            res.writeHead(200, {
                'Content-Type': 'text/html; charset=utf-8',
                'Content-Length': Buffer.byteLength(body),
            });
            res.end(body);
        };
        if (latencyMs > 0) setTimeout(send, latencyMs);
        else send();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as AddressInfo).port,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }),
    };
}
