import net from 'node:net';

/** Whether something answering like Redis listens at `url` (a PING within a second). */
export function redisAnswers(url: string): Promise<boolean> {
    let u: URL;
    try {
        u = new URL(url);
    } catch {
        return Promise.resolve(false);
    }
    return new Promise((resolve) => {
        const socket = net.connect(Number(u.port || 6379), u.hostname.replace(/^\[|\]$/g, ''));
        const done = (ok: boolean) => {
            socket.destroy();
            resolve(ok);
        };
        socket.setTimeout(1_000, () => done(false));
        socket.on('error', () => done(false));
        socket.on('connect', () => socket.write('PING\r\n'));
        // "+PONG", or "-NOAUTH" from a Redis that wants a password (the URL's credentials are the clock's business).
        socket.on('data', (d) => done(/^[+-]/.test(String(d))));
    });
}
