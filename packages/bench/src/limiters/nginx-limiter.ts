import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ChildServer, startChildServer } from './child-server';
import { findBinary, MissingLimiterBinaryError } from './find-binary';
import { freePort } from './free-port';

/** What one nginx in front of an origin limits. */
export type NginxLimit =
    | {
          /** `limit_req`: a leaky bucket of `ratePerMin` requests a minute with room for `burst` more. */
          kind: 'limit_req';
          ratePerMin: number;
          burst: number;
          /** Refuse beyond the rate at once (`nodelay`) or hold requests within the burst until their turn. */
          nodelay: boolean;
          status: 429 | 503;
      }
    | {
          /** `limit_conn`: at most `conns` requests of the client being processed at once. */
          kind: 'limit_conn';
          conns: number;
          status: 429 | 503;
      };

/**
 * nginx's config for one limit. Pages go through `proxy_pass` to the origin: a `return` location runs
 * before the limiting phases and would never be limited. Every path nginx writes is under `dir`.
 */
export function nginxConfig(limit: NginxLimit, port: number, originPort: number, dir: string): string {
    const zone =
        limit.kind === 'limit_req'
            ? `limit_req_zone $binary_remote_addr zone=pages:1m rate=${limit.ratePerMin}r/m;`
            : 'limit_conn_zone $binary_remote_addr zone=pages:1m;';
    const rule =
        limit.kind === 'limit_req'
            ? `limit_req zone=pages burst=${limit.burst}${limit.nodelay ? ' nodelay' : ''};\n            limit_req_status ${limit.status};`
            : `limit_conn pages ${limit.conns};\n            limit_conn_status ${limit.status};`;
    return `worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ${join(dir, 'tmp', 'body')};
    proxy_temp_path ${join(dir, 'tmp', 'proxy')};
    fastcgi_temp_path ${join(dir, 'tmp', 'fastcgi')};
    uwsgi_temp_path ${join(dir, 'tmp', 'uwsgi')};
    scgi_temp_path ${join(dir, 'tmp', 'scgi')};
    ${zone}
    upstream origin {
        server 127.0.0.1:${originPort};
        keepalive 64;
    }
    server {
        listen 127.0.0.1:${port};
        location / {
            ${rule}
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }
    }
}
`;
}

/** Starts nginx as a child process (`-p <dir> -c <conf>`, never the system config) on a free port. */
export async function startNginx(limit: NginxLimit, originPort: number): Promise<ChildServer> {
    const binary = findBinary('nginx');
    if (!binary) throw new MissingLimiterBinaryError('nginx');
    const dir = mkdtempSync(join(tmpdir(), 'limiter-nginx-'));
    mkdirSync(join(dir, 'tmp'));
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, nginxConfig(limit, port, originPort, dir));
    // `-e` sends the errors of startup itself (before the config is read) to the temp dir as well.
    const args = ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')];
    return startChildServer(binary, args, port, dir, 'error.log');
}
