import type { ServerResponse } from 'node:http';
import type { PageResponse } from './site-pages';

/**
 * Sends the status line, headers (with the full `Content-Length`) and the first half of the body, then
 * resets the TCP connection once that much has left, so the client sees a response cut off mid-way
 * (ECONNRESET), not a refusal it could read.
 */
export function sendThenReset(res: ServerResponse, page: PageResponse, headers: Record<string, string>): void {
    if (res.destroyed) return;
    const body = Buffer.from(page.body);
    res.writeHead(page.status, { ...headers, 'Content-Type': page.contentType, 'Content-Length': body.length });
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => {
        const socket = res.socket;
        if (!socket || socket.destroyed) return;
        socket.resetAndDestroy();
    });
}
