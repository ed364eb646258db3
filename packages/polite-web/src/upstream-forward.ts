import { type Agent, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';

// Headers that describe one connection, not the message (RFC 9110 §7.6.1); a proxy drops them.
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
    const copy = { ...headers };
    for (const name of HOP_BY_HOP) delete copy[name];
    return copy;
}

/**
 * Sends one request on to a server on 127.0.0.1 and streams its answer back unchanged (status, headers,
 * body), as a transparent reverse proxy. `onStatus` hears the upstream's status and headers once they
 * arrive, or 502 when the upstream cannot be reached; a client that goes away aborts the upstream
 * request, so a limiter counting connections sees it end.
 */
export function forwardToUpstream(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: { port: number; path: string; host: string; agent: Agent },
    onStatus: (status: number, headers: IncomingHttpHeaders) => void,
): void {
    const outgoing = request(
        {
            host: '127.0.0.1',
            port: upstream.port,
            method: req.method,
            path: upstream.path,
            headers: { ...endToEnd(req.headers), host: upstream.host },
            agent: upstream.agent,
        },
        (answer) => {
            const status = answer.statusCode ?? 502;
            onStatus(status, answer.headers);
            res.writeHead(status, endToEnd(answer.headers));
            answer.pipe(res);
            answer.once('error', () => res.destroy());
        },
    );
    outgoing.once('error', () => {
        if (res.headersSent) {
            res.destroy();
            return;
        }
        onStatus(502, {});
        const body = 'upstream unreachable\n';
        res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
    });
    res.once('close', () => {
        if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
}
