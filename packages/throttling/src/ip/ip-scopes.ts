import type { DomainQueue } from '../core/domain-queue';
import { canonicalAddress, ipScopeKey, pickAddress } from './ip-address';
import type { IpResolver } from './ip-resolver';

/** Answers are kept at least this long (a TTL of 0 would send a query per request) ... */
export const MIN_DNS_TTL_MS = 1_000;
/** ... and at most this long, so a host that moved is noticed within the hour. */
export const MAX_DNS_TTL_MS = 3_600_000;
/** A host that failed to resolve is asked again after this long (paced by its host alone meanwhile). */
export const DNS_FAILURE_RETRY_MS = 60_000;
/** A first answer that takes longer than this counts as a failure: its requests go by their host alone. */
export const DNS_RESOLVE_TIMEOUT_MS = 5_000;
/** Most hostnames remembered; the least recently resolved go first. */
const MAX_HOSTS = 10_000;

/** One hostname's last answer and the query in flight. */
interface HostEntry {
    /** The IP scope of the last answer; undefined before one, or after a failure. */
    scope?: string;
    /** When the answer (or the failure) goes stale and the host is asked again. */
    expiresAt: number;
    failed: boolean;
    /** The query in flight: when it started, its number (a later one supersedes it), and whether it is overdue. */
    resolving?: { startedAt: number; attempt: number; overdue?: boolean };
    /** Its failure was logged (once per host). */
    warned: boolean;
}

/** What the IP scopes need. */
export interface IpScopesDeps {
    resolver: IpResolver;
    now(): number;
    warn(message: string): void;
    /** A domain held for its head request's first answer may go: the answer (or a failure) came. */
    released(entry: DomainQueue, heldUntil: number): void;
}

/**
 * The IP scope of each request (`throttleBy: 'ip'`): hosts that resolve to one address share the
 * scope `ip:<address>` beside their own. Answers are cached for their TTL, and a stale one serves
 * while it is asked again, so only a host's very first request can wait for DNS. A failure, or a
 * first answer slower than {@link DNS_RESOLVE_TIMEOUT_MS}, leaves the host paced by its own scope
 * (logged once per host) and is asked again after {@link DNS_FAILURE_RETRY_MS}.
 */
export class IpScopes {
    private readonly hosts = new Map<string, HostEntry>();
    // Domains held for a host's first answer, released when it comes.
    private readonly waiters = new Map<string, { entry: DomainQueue; heldUntil: number }[]>();
    private attempts = 0;

    constructor(private readonly deps: IpScopesDeps) {}

    /**
     * The IP scope of `url` at `now`: `ip:<address>`; `'pending'` while its host's first answer is
     * awaited; undefined when it goes by its host alone (no host, or DNS failed). A literal address
     * is its own scope. Starts a query when the host is new or its answer is stale.
     */
    scopeOf(url: string, now: number): string | 'pending' | undefined {
        const host = hostnameOf(url);
        if (host === undefined) return undefined;
        const literal = canonicalAddress(host);
        if (literal !== undefined) return ipScopeKey(literal);
        let entry = this.hosts.get(host);
        if (!entry) {
            entry = { expiresAt: 0, failed: false, warned: false };
            this.remember(host, entry);
        }
        const query = entry.resolving;
        if (query && !query.overdue && now - query.startedAt >= DNS_RESOLVE_TIMEOUT_MS) {
            // A first answer, or the refresh of a stale one, is overdue: the host goes by itself for now
            // (an answer that still comes is taken).
            query.overdue = true;
            this.fail(host, entry, now, `no answer within ${DNS_RESOLVE_TIMEOUT_MS / 1000} s`);
        }
        if (now >= entry.expiresAt) this.ask(host, entry, now);
        return entry.scope !== undefined || entry.failed ? entry.scope : 'pending';
    }

    /**
     * Holds `entry` (a domain whose head request waits for `url`'s first answer) until the answer
     * comes, at most {@link DNS_RESOLVE_TIMEOUT_MS}; returns the time it is held until.
     */
    hold(url: string, entry: DomainQueue, now: number): number {
        const host = hostnameOf(url)!;
        const heldUntil = now + DNS_RESOLVE_TIMEOUT_MS;
        const waiting = this.waiters.get(host) ?? [];
        waiting.push({ entry, heldUntil });
        this.waiters.set(host, waiting);
        return heldUntil;
    }

    /** Hostnames with an answer or a query remembered (bounded). */
    get size(): number {
        return this.hosts.size;
    }

    /** Starts a query unless one runs that is not yet overdue. */
    private ask(host: string, entry: HostEntry, now: number): void {
        if (entry.resolving && !entry.resolving.overdue) return;
        const attempt = ++this.attempts;
        entry.resolving = { startedAt: now, attempt };
        // Through a promise, so a resolver that throws, or answers a plain value, is read like any other.
        void Promise.resolve(host)
            .then(this.deps.resolver)
            .then(
                (value) => this.settle(host, attempt, value, undefined),
                (error: unknown) => this.settle(host, attempt, undefined, error),
            );
    }

    private settle(host: string, attempt: number, value: unknown, error: unknown): void {
        const entry = this.hosts.get(host);
        // Superseded by a later query (this one was overdue), or forgotten meanwhile.
        if (!entry || entry.resolving?.attempt !== attempt) return;
        entry.resolving = undefined;
        const now = this.deps.now();
        const answer = readAnswer(value);
        if (answer) {
            entry.scope = ipScopeKey(answer.address);
            entry.failed = false;
            entry.expiresAt = now + answer.ttlMs;
            this.remember(host, entry);
        } else {
            this.fail(host, entry, now, error === undefined ? 'no usable address' : describe(error));
        }
        this.releaseWaiters(host);
    }

    private fail(host: string, entry: HostEntry, now: number, reason: string): void {
        entry.scope = undefined;
        entry.failed = true;
        entry.expiresAt = now + DNS_FAILURE_RETRY_MS;
        if (!entry.warned) {
            entry.warned = true;
            this.deps.warn(
                `throttleBy 'ip': ${host} could not be resolved (${reason}); it is paced by its host alone, and asked again every ${DNS_FAILURE_RETRY_MS / 1000} s.`,
            );
        }
        this.releaseWaiters(host);
    }

    private releaseWaiters(host: string): void {
        const waiting = this.waiters.get(host);
        if (!waiting) return;
        this.waiters.delete(host);
        for (const { entry, heldUntil } of waiting) this.deps.released(entry, heldUntil);
    }

    private remember(host: string, entry: HostEntry): void {
        this.hosts.delete(host);
        if (this.hosts.size >= MAX_HOSTS) {
            const oldest = this.hosts.keys().next();
            if (oldest.done !== true) this.hosts.delete(oldest.value);
        }
        this.hosts.set(host, entry);
    }
}

/** The address and how long to keep it, from a resolver's answer; undefined when it has none. */
function readAnswer(value: unknown): { address: string; ttlMs: number } | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const { addresses, ttlSecs } = value as { addresses?: unknown; ttlSecs?: unknown };
    if (!Array.isArray(addresses)) return undefined;
    const address = pickAddress(addresses.filter((a): a is string => typeof a === 'string'));
    if (address === undefined) return undefined;
    const ttlMs = typeof ttlSecs === 'number' && Number.isFinite(ttlSecs) ? ttlSecs * 1000 : MIN_DNS_TTL_MS;
    return { address, ttlMs: Math.min(MAX_DNS_TTL_MS, Math.max(MIN_DNS_TTL_MS, ttlMs)) };
}

/** The hostname of a URL as WHATWG parses it (no brackets, no trailing root dot). */
function hostnameOf(url: string): string | undefined {
    let hostname: string;
    try {
        hostname = new URL(url).hostname;
    } catch {
        return undefined;
    }
    if (hostname.startsWith('[')) hostname = hostname.slice(1, -1);
    if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
    return hostname === '' ? undefined : hostname;
}

function describe(error: unknown): string {
    const code = (error as { code?: unknown })?.code;
    return typeof code === 'string' ? code : String(error);
}
