import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ChildServer, startChildServer } from './child-server';
import { findBinary, MissingLimiterBinaryError } from './find-binary';
import { freePort } from './free-port';

/**
 * haproxy's config: a stick table tracks each client's `http_req_rate(10s)` and requests above
 * `limitPer10s` are denied with 429. The table counts every request, denied ones too, so a client that
 * keeps knocking stays over the limit.
 */
export function haproxyConfig(limitPer10s: number, port: number, originPort: number): string {
    return `global
    maxconn 2000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend pages
    bind 127.0.0.1:${port}
    stick-table type ip size 1k expire 60s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt ${limitPer10s} }
    default_backend origin
backend origin
    http-reuse always
    server origin 127.0.0.1:${originPort}
`;
}

/** Starts haproxy in the foreground (`-f <cfg> -db`) on a free port, its config in a temp dir. */
export async function startHaproxy(limitPer10s: number, originPort: number): Promise<ChildServer> {
    const binary = findBinary('haproxy');
    if (!binary) throw new MissingLimiterBinaryError('haproxy');
    const dir = mkdtempSync(join(tmpdir(), 'limiter-haproxy-'));
    const port = await freePort();
    const cfg = join(dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(limitPer10s, port, originPort));
    return startChildServer(binary, ['-f', cfg, '-db'], port, dir, 'haproxy.cfg');
}
