import { ThrottlingOptionsError } from '../core/errors';
import { isIpScope } from '../ip/ip-address';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { ResolvedPolicy } from '../pacing/policy';
import { domainKeyOfConfigured, domainKeyOfUrl } from '../routing/domain-key';
import type { RequestScopes } from '../options/request-scopes';
import { readScopesDeclaration } from '../options/request-scopes';
import { matchPathScope } from '../routing/scope-path';

/** The parts of a request (or request-like) that decide its scopes. */
export type ScopedSource = { url: string; userData?: Record<string, unknown> };

/**
 * Maps URLs and requests to throttling keys, scopes and policies. Holds no crawl state: the same
 * question always gets the same answer, so every collaborator may ask it.
 */
export class ScopeRouter {
    // Configured domain keys (empty under 'all').
    readonly listedDomains: ReadonlySet<string>;
    // Path-prefix scopes per domain key, longest first: requests under them get their own key.
    private readonly pathScopes = new Map<string, string[]>();

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly warnOnce: (message: string) => void,
    ) {
        const { domains, throttleBy } = options;
        this.listedDomains = new Set(domains === 'all' ? [] : domains.map((d, i) => configuredKey(d, i, throttleBy)));
        for (const key of options.scopes.keys()) this.notePathScope(key);
    }

    /** A scope's settings changed at run time: a new path scope routes. */
    scopeChanged(key: string): void {
        this.notePathScope(key);
    }

    private notePathScope(key: string): void {
        const slash = key.indexOf('/');
        if (slash === -1) return;
        const host = key.slice(0, slash);
        const prefixes = this.pathScopes.get(host) ?? [];
        const prefix = key.slice(slash);
        if (prefixes.includes(prefix)) return;
        prefixes.push(prefix);
        prefixes.sort((a, b) => b.length - a.length);
        this.pathScopes.set(host, prefixes);
    }

    /** Whether a throttling key (a domain key, or `host/path` of an endpoint scope) is paced. */
    isThrottled(key: string): boolean {
        if (this.options.domains === 'all' || this.options.scopes.has(key)) return true;
        const slash = key.indexOf('/');
        return this.listedDomains.has(slash === -1 ? key : key.slice(0, slash));
    }

    /** The throttling key of a URL: its domain key, or `host/path-prefix` when an endpoint scope covers it. */
    domainKeyOf(url: string): string | undefined {
        const key = domainKeyOfUrl(url, this.options.throttleBy);
        if (key === undefined) return undefined;
        const prefixes = this.pathScopes.get(key);
        if (!prefixes) return key;
        let path: string;
        try {
            path = new URL(url).pathname;
        } catch {
            return key;
        }
        // Normalised first (percent-encoding, `;params`, dot segments), then segment-aware: `/search`
        // covers `/search` and `/search/...`, not `/searchlight`.
        const match = matchPathScope(prefixes, path);
        return match ? `${key}${match}` : key;
    }

    /**
     * The scopes of a request: by default its domain, plus any in `userData.throttlingScopes`;
     * with `getScopes`, whatever it returns (the first scope holds the request's queue).
     */
    scopesOf(request: ScopedSource): RequestScopes | undefined {
        const scopes = this.declaredScopesOf(request);
        const redirect = redirectScopeOf(request);
        if (!scopes || redirect === undefined || scopes.primary === redirect) return scopes;
        if (scopes.extras.some(([scope]) => scope === redirect)) return scopes;
        // Its retries also wait for the domain it was redirected to last time (its backoff, its pace).
        return { ...scopes, extras: [...scopes.extras, [redirect, 1]] };
    }

    private declaredScopesOf(request: ScopedSource): RequestScopes | undefined {
        const declared = this.declaredScopes(request);
        if (declared.custom && declared.pairs && declared.pairs.length > 0) {
            const [first, ...rest] = declared.pairs;
            return { primary: first[0], primaryCost: first[1], extras: rest };
        }
        const domain = this.domainKeyOf(request.url);
        if (domain === undefined) return undefined;
        const pairs = declared.pairs;
        if (!pairs?.length) return { primary: domain, primaryCost: 1, extras: [] };
        const own = pairs.find(([scope]) => scope === domain);
        return { primary: domain, primaryCost: own ? own[1] : 1, extras: pairs.filter(([scope]) => scope !== domain) };
    }

    /** The key of the queue a request belongs to, if it is throttled; undefined for `inner`. */
    routeOf(source: ScopedSource): string | undefined {
        if (this.options.getScopes) {
            const scopes = this.scopesOf(source);
            if (!scopes) return undefined;
            // A primary scope other than the domain was chosen by getScopes: always throttled.
            if (scopes.primary !== this.domainKeyOf(source.url) || this.isThrottled(scopes.primary)) {
                return scopes.primary;
            }
            return undefined;
        }
        const key = this.domainKeyOf(source.url);
        return key !== undefined && this.isThrottled(key) ? key : undefined;
    }

    /** Whether a request declares scopes of its own (so admission must read them). */
    declaresScopes(request: ScopedSource): boolean {
        const { userData } = request;
        return (
            this.options.getScopes !== undefined ||
            userData?.throttlingScopes !== undefined ||
            redirectScopeOf(request) !== undefined
        );
    }

    /**
     * The policy in force for a throttling key. Not cached per key: the look-up is one map read, and a
     * cache would keep an entry for every key ever met, evicted ones included (broad crawls).
     */
    policyOf(key: string): ResolvedPolicy {
        return this.options.scopes.get(key) ?? (isIpScope(key) ? this.options.ipPolicy : this.options.defaultPolicy);
    }

    private declaredScopes(request: ScopedSource): { pairs?: [string, number][]; custom: boolean } {
        const { throttleBy, getScopes } = this.options;
        try {
            const fromUser = getScopes?.(request);
            if (fromUser !== undefined) return { pairs: readScopesDeclaration(fromUser, throttleBy), custom: true };
            return { pairs: readScopesDeclaration(request.userData?.throttlingScopes, throttleBy), custom: false };
        } catch (error) {
            this.warnOnce(`Ignoring the scopes of ${request.url}: ${(error as Error).message}`);
            return { custom: false };
        }
    }
}

function configuredKey(domain: string, index: number, throttleBy: ResolvedThrottlingOptions['throttleBy']): string {
    try {
        return domainKeyOfConfigured(domain, throttleBy);
    } catch (error) {
        throw new ThrottlingOptionsError(
            `Invalid ThrottlingRequestManager options: \`domains[${index}]\`: ${(error as Error).message}`,
        );
    }
}

/** Where a request's last answer came from after a redirect to another domain (see ResponseInterpreter). */
export const REDIRECT_SCOPE_KEY = '__throttlingRedirectedTo';

function redirectScopeOf(request: ScopedSource): string | undefined {
    const value = request.userData?.[REDIRECT_SCOPE_KEY];
    return typeof value === 'string' && value !== '' ? value : undefined;
}
