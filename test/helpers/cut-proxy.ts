import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that can cut the line and restore it on the same port, as a network
 * outage would: `cut()` drops every connection and drops new ones at once until `restore()`.
 */
export class CutProxy {
    private readonly server: net.Server;
    private readonly sockets = new Set<net.Socket>();
    private isCut = false;
    private port = 0;

    private constructor(
        private readonly host: string,
        private readonly targetPort: number,
    ) {
        this.server = net.createServer((client) => this.accept(client));
    }

    /** Starts a proxy to the host and port of `url` (e.g. `redis://127.0.0.1:6379`). */
    static async start(url: string): Promise<CutProxy> {
        const target = new URL(url);
        const proxy = new CutProxy(target.hostname.replace(/^\[|\]$/g, ''), Number(target.port || 6379));
        await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
        proxy.port = (proxy.server.address() as AddressInfo).port;
        return proxy;
    }

    /** `url` with the proxy in place of the target (credentials and path kept). */
    urlFor(url: string): string {
        const u = new URL(url);
        u.hostname = '127.0.0.1';
        u.port = String(this.port);
        return u.href;
    }

    cut(): void {
        this.isCut = true;
        for (const socket of this.sockets) socket.destroy();
    }

    restore(): void {
        this.isCut = false;
    }

    async close(): Promise<void> {
        this.cut();
        await new Promise<void>((resolve) => this.server.close(() => resolve()));
    }

    private accept(client: net.Socket): void {
        if (this.isCut) {
            client.destroy();
            return;
        }
        const upstream = net.connect(this.targetPort, this.host);
        for (const s of [client, upstream]) {
            this.sockets.add(s);
            s.on('error', () => s.destroy());
            s.on('close', () => {
                this.sockets.delete(s);
                client.destroy();
                upstream.destroy();
            });
        }
        client.pipe(upstream);
        upstream.pipe(client);
    }
}
