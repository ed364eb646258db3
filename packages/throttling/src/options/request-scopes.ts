import type { ThrottleBy } from '../routing/domain-key';
import { domainKeyOfConfigured } from '../routing/domain-key';
import { parseScopeKey } from './scope-key';
import { isIpScope } from '../ip/ip-address';

/**
 * What a request says about its scopes: `request.userData.throttlingScopes` (or `getScopes`)
 * may be a scope, a list of scopes, or a map of scope → cost.
 */
export type ScopesDeclaration = string | readonly string[] | Readonly<Record<string, number>>;

/** Replaces the default scopes of a request (its domain) with user logic. */
export type GetScopes = (request: { url: string; userData?: Record<string, unknown> }) => ScopesDeclaration | undefined;

/** The scopes a request is paced by: the one whose queue holds it, and the others it must clear. */
export interface RequestScopes {
    primary: string;
    primaryCost: number;
    extras: [scope: string, cost: number][];
}

/** Named scopes (`@budget`) are free-form; others are hostnames, `host/path` prefixes or `ip:` addresses. */
export const NAMED_SCOPE = /^@[\w.:-]+$/;

/**
 * Normalises one scope name so that configuration, `userData` and `getScopes` agree: `@name` as
 * it is, a hostname (or `host/path`) through the same key mapping as crawled URLs.
 */
export function normalizeScope(raw: string, throttleBy: ThrottleBy): string {
    if (NAMED_SCOPE.test(raw)) return raw;
    const parsed = parseScopeKey(raw);
    if (isIpScope(parsed.key)) return parsed.key;
    const host = domainKeyOfConfigured(parsed.host, throttleBy);
    return parsed.pathPrefix ? `${host}${parsed.pathPrefix}` : host;
}

/**
 * Reads a scopes declaration into `[scope, cost]` pairs (in order, first wins on duplicates).
 * Throws a message naming the bad value when it is malformed.
 */
export function readScopesDeclaration(value: unknown, throttleBy: ThrottleBy): [string, number][] | undefined {
    if (value === undefined || value === null) return undefined;
    const pairs: [string, number][] = [];
    const add = (scope: unknown, cost: unknown) => {
        if (typeof scope !== 'string')
            throw new TypeError(`throttlingScopes: ${JSON.stringify(scope)} is not a scope name`);
        if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) {
            throw new TypeError(
                `throttlingScopes: the cost of ${scope} must be a number >= 0, got ${JSON.stringify(cost)}`,
            );
        }
        const key = normalizeScope(scope, throttleBy);
        if (!pairs.some(([k]) => k === key)) pairs.push([key, cost]);
    };
    if (typeof value === 'string') add(value, 1);
    else if (Array.isArray(value)) for (const scope of value) add(scope, 1);
    else if (typeof value === 'object') for (const [scope, cost] of Object.entries(value)) add(scope, cost);
    else
        throw new TypeError(
            `throttlingScopes must be a scope, a list of scopes or a map of scope to cost, got ${typeof value}`,
        );
    return pairs;
}
