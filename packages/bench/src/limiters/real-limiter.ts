import { startHaproxy } from './haproxy-limiter';
import { startNginx } from './nginx-limiter';
import { startExpressRateLimit, startRateLimiterFlexible } from './node-limiters';
import { startOrigin } from './origin-server';

/** One real limiter, as B5 and the limiter end-to-end tests start it, with the pages behind it. */
export type RealLimiterSpec =
    | {
          kind: 'nginx-limit-req';
          ratePerMin: number;
          burst: number;
          nodelay: boolean;
          status: 429 | 503;
          latencyMs: number;
      }
    | { kind: 'nginx-limit-conn'; conns: number; status: 429 | 503; latencyMs: number }
    | { kind: 'haproxy'; limitPer10s: number; latencyMs: number }
    | {
          kind: 'express-rate-limit';
          limit: number;
          windowSecs: number;
          headers: 'draft-8' | 'legacy';
          latencyMs: number;
      }
    | { kind: 'rate-limiter-flexible'; points: number; durationSecs: number; latencyMs: number };

export type RealLimiterKind = RealLimiterSpec['kind'];

/** The binary a limiter kind runs, if it is not a Node library in this process. */
export function binaryOf(kind: RealLimiterKind): 'nginx' | 'haproxy' | undefined {
    if (kind === 'nginx-limit-req' || kind === 'nginx-limit-conn') return 'nginx';
    return kind === 'haproxy' ? 'haproxy' : undefined;
}

/** A started limiter: its port on 127.0.0.1, and `close()` for it and its origin. */
export interface RunningLimiter {
    readonly spec: RealLimiterSpec;
    readonly port: number;
    close(): Promise<void>;
}

/** What an oracle is told: the limiter's sustained rate (requests/s) or its concurrency cap. */
export interface LimiterTruth {
    rate?: number;
    concurrency?: number;
}

export function limiterTruth(spec: RealLimiterSpec): LimiterTruth {
    switch (spec.kind) {
        case 'nginx-limit-req':
            return { rate: spec.ratePerMin / 60 };
        case 'nginx-limit-conn':
            return { concurrency: spec.conns };
        case 'haproxy':
            return { rate: spec.limitPer10s / 10 };
        case 'express-rate-limit':
            return { rate: spec.limit / spec.windowSecs };
        case 'rate-limiter-flexible':
            return { rate: spec.points / spec.durationSecs };
    }
}

/** Starts the limiter (and, for nginx and haproxy, the origin it proxies to). */
export async function startRealLimiter(spec: RealLimiterSpec): Promise<RunningLimiter> {
    if (spec.kind === 'express-rate-limit') {
        const server = await startExpressRateLimit(spec);
        return { spec, port: server.port, close: () => server.close() };
    }
    if (spec.kind === 'rate-limiter-flexible') {
        const server = await startRateLimiterFlexible(spec);
        return { spec, port: server.port, close: () => server.close() };
    }
    const origin = await startOrigin(spec.latencyMs);
    try {
        const front =
            spec.kind === 'haproxy'
                ? await startHaproxy(spec.limitPer10s, origin.port)
                : await startNginx(
                      spec.kind === 'nginx-limit-req'
                          ? {
                                kind: 'limit_req',
                                ratePerMin: spec.ratePerMin,
                                burst: spec.burst,
                                nodelay: spec.nodelay,
                                status: spec.status,
                            }
                          : { kind: 'limit_conn', conns: spec.conns, status: spec.status },
                      origin.port,
                  );
        return {
            spec,
            port: front.port,
            close: async () => {
                await front.close();
                await origin.close();
            },
        };
    } catch (error) {
        await origin.close();
        throw error;
    }
}
