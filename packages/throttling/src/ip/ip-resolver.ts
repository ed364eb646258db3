import { promises as dns } from 'node:dns';

/** What a resolver answers for one hostname: its addresses, and how long the answer may be kept. */
export interface ResolvedAddresses {
    addresses: readonly string[];
    /** Seconds the answer may be cached (the DNS records' TTL). */
    ttlSecs: number;
}

/**
 * Resolves a hostname to its addresses (`throttleBy: 'ip'`). Rejects when it cannot; the host is then
 * paced by its own scope alone.
 */
export type IpResolver = (hostname: string) => Promise<ResolvedAddresses>;

/**
 * How long an answer of `dns.lookup` is kept: it comes from the system resolver (`/etc/hosts`,
 * `localhost`, mDNS), which tells no TTL.
 */
export const LOOKUP_TTL_SECS = 60;

/** Per DNS query: the time the resolver waits for a server, and how often it asks. */
const QUERY_TIMEOUT_MS = 2_000;
const QUERY_TRIES = 2;

/** The DNS calls the system resolver makes; injected in tests. */
export interface DnsApi {
    resolve4(hostname: string): Promise<{ address: string; ttl: number }[]>;
    resolve6(hostname: string): Promise<{ address: string; ttl: number }[]>;
    lookup(hostname: string): Promise<{ address: string; family: number }[]>;
}

/** Node's resolver: DNS queries with TTLs, bounded per query, and the system lookup. */
function nodeDnsApi(): DnsApi {
    const resolver = new dns.Resolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES });
    return {
        resolve4: (hostname) => resolver.resolve4(hostname, { ttl: true }),
        resolve6: (hostname) => resolver.resolve6(hostname, { ttl: true }),
        lookup: (hostname) => dns.lookup(hostname, { all: true }),
    };
}

/**
 * The default resolver: A and AAAA records (asked together) with their TTL, the least TTL of the
 * records kept; a name DNS does not know (`localhost`, an `/etc/hosts` entry) falls back to the
 * system lookup, kept {@link LOOKUP_TTL_SECS}. `*.localhost` goes to the lookup at once (RFC 6761
 * reserves it for the loopback, and DNS servers answer it with NXDOMAIN).
 */
export function createSystemIpResolver(api: DnsApi = nodeDnsApi()): IpResolver {
    return async (hostname) => {
        if (!isLocalhost(hostname)) {
            const answers = await Promise.allSettled([api.resolve4(hostname), api.resolve6(hostname)]);
            const records = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
            if (records.length > 0) {
                return {
                    addresses: records.map((r) => r.address),
                    ttlSecs: Math.min(...records.map((r) => r.ttl)),
                };
            }
        }
        const found = await api.lookup(hostname);
        if (found.length === 0) throw new Error(`no address found for ${hostname}`);
        return { addresses: found.map((r) => r.address), ttlSecs: LOOKUP_TTL_SECS };
    };
}

function isLocalhost(hostname: string): boolean {
    return hostname === 'localhost' || hostname.endsWith('.localhost');
}
