import { InvalidArgumentError, ThrottlingOptionsError, describeValue } from '../core/errors';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { PacingRecorder } from '../dispatch/pacing-recorder';
import { assertPacingSignal } from '../pacing/pacing-signal';
import type { PacingSignal as UnscopedSignal } from '../pacing/pacing-signal';
import type { ScopeRouter } from '../scopes/scope-router';

/**
 * How much of the URL space a signal covers, as Crawlee v4 names it: `'hostname'`, `'registrableDomain'`,
 * or (this package's own vocabulary) a throttling key: a domain, a `host/path` endpoint or an `@named` scope.
 */
export type PacingScope = 'hostname' | 'registrableDomain' | (string & NonNullable<unknown>);

/**
 * What a response (or robots.txt) says about how fast a domain may be crawled, recorded with
 * `ThrottlingRequestManager.recordPacingSignal()`. `scope` (optional) says how far it reaches; left out,
 * the signal applies to the URL's throttling key.
 */
export type PacingSignal = UnscopedSignal & { scope?: PacingScope };

/** A signal in Crawlee v4's shape: the URL is passed beside it, not inside it. */
export type UrlLessPacingSignal =
    | { reason: 'rateLimited'; waitMs?: number; scope?: PacingScope }
    | { reason: 'minInterval'; intervalMs: number; scope?: PacingScope };

/** What applying a signal needs. */
export interface ScopedSignalDeps {
    options: ResolvedThrottlingOptions;
    router: ScopeRouter;
    recorder: Pick<PacingRecorder, 'record' | 'recordRateLimit'>;
    /** Whether a key is paced here (throttled, and not over the domain limit). */
    paces(key: string): boolean;
}

/**
 * Applies pacing signals with a `scope`: a scope this manager groups by (or a narrower one it widens)
 * goes to the URL's key, a throttling key names the key itself, anything else throws, since applying
 * it to one key would leave the rest of what it covers unpaced.
 */
export class ScopedSignals {
    constructor(private readonly deps: ScopedSignalDeps) {}

    /** Records a signal; returns whether some paced key took it (false: it matched nothing). */
    record(signal: PacingSignal): boolean {
        assertPacingSignal(signal);
        if (signal.scope !== undefined && typeof signal.scope !== 'string') {
            throw new InvalidArgumentError(
                `recordPacingSignal: scope must be a string, got ${describeValue(signal.scope)}`,
            );
        }
        if (signal.reason === 'minIntervalEverywhere') {
            // A floor over every throttled domain matches nothing when no domain can be throttled.
            if (!this.throttlesAnything()) return false;
            return this.deps.recorder.record(signal);
        }
        const key = this.keyOf(signal.url, signal.scope);
        if (key === undefined || !this.deps.paces(key)) return false;
        if (key === this.deps.router.domainKeyOf(signal.url)) return this.deps.recorder.record(signal);
        if (signal.reason === 'minInterval') {
            throw new ThrottlingOptionsError(
                `recordPacingSignal: a minInterval signal applies to its URL's own key (${String(this.deps.router.domainKeyOf(signal.url))}); scope "${String(signal.scope)}" is another key. Declare that key's interval with updateScope(key, { delaySecs }).`,
            );
        }
        this.deps.recorder.recordRateLimit(key, signal.waitMs);
        return true;
    }

    /** The key a signal about `url` scoped to `scope` applies to; undefined when the URL has none. */
    private keyOf(url: string, scope: PacingScope | undefined): string | undefined {
        const own = this.deps.router.domainKeyOf(url);
        const { throttleBy, scopes } = this.deps.options;
        if (scope === undefined || scope === throttleBy) return own;
        // Grouping by registrable domain paces every host of the site: wider than asked, never narrower.
        if (scope === 'hostname' && throttleBy === 'registrableDomain') return own;
        if (scope === own || scopes.has(scope) || this.deps.router.isThrottled(scope)) return scope;
        throw new ThrottlingOptionsError(
            `recordPacingSignal: cannot honour scope "${scope}": this manager groups requests by "${throttleBy}", ` +
                `so the scope must be "${throttleBy}"${throttleBy === 'registrableDomain' ? ' or "hostname"' : ''}, ` +
                `a throttled domain, a "host/path" endpoint or an "@name" scope of the options. ` +
                (scope === 'registrableDomain' ? "Set throttleBy: 'registrableDomain' to pace whole sites." : ''),
        );
    }

    private throttlesAnything(): boolean {
        const { options, router } = this.deps;
        return (
            options.domains === 'all' ||
            router.listedDomains.size > 0 ||
            options.scopes.size > 0 ||
            options.getScopes !== undefined
        );
    }
}
