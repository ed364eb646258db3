import { isIP, isIPv4 } from 'node:net';

/**
 * IP scopes (`throttleBy: 'ip'`): the key every host that resolves to one address shares, and the
 * canonical spelling of that address, so a resolver's answer, a URL's literal address and a
 * configured `scopes` key agree.
 */

/** The prefix of an IP scope key: `ip:203.0.113.7`, `ip:2001:db8::1`. */
export const IP_SCOPE_PREFIX = 'ip:';

/** Whether a scope key names an address (as opposed to a host, endpoint or `@named` scope). */
export function isIpScope(key: string): boolean {
    return key.startsWith(IP_SCOPE_PREFIX);
}

/** The scope key of a canonical address. */
export function ipScopeKey(address: string): string {
    return `${IP_SCOPE_PREFIX}${address}`;
}

/**
 * The canonical form of an address, or undefined when it is none: IPv4 dotted, IPv6 compressed and
 * lower case without brackets, and an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as the IPv4
 * address it maps, since a dual-stack socket reaches the same server through either.
 */
export function canonicalAddress(raw: string): string | undefined {
    if (typeof raw !== 'string') return undefined;
    const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
    const family = isIP(bare);
    if (family === 4) return new URL(`http://${bare}/`).hostname;
    if (family !== 6) return undefined;
    const compressed = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
    return mappedIpv4(compressed) ?? compressed;
}

/** `::ffff:7f00:1` (how WHATWG writes `::ffff:127.0.0.1`) as `127.0.0.1`; undefined for any other address. */
function mappedIpv4(compressed: string): string | undefined {
    const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
    if (!match) return undefined;
    const high = parseInt(match[1], 16);
    const low = parseInt(match[2], 16);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The one address that stands for a host: the lowest IPv4 address it resolves to, or the lowest IPv6
 * one when it has no IPv4. The lowest, not the first, because DNS servers rotate the order of a
 * record set: two hosts on the same set must land on the same scope whatever order each answer
 * came in. Undefined when no entry is an address.
 */
export function pickAddress(addresses: readonly string[]): string | undefined {
    const canonical = addresses.map(canonicalAddress).filter((a): a is string => a !== undefined);
    const v4 = canonical.filter((a) => isIPv4(a)).sort(compareIpv4);
    if (v4.length > 0) return v4[0];
    return canonical.sort()[0];
}

function compareIpv4(a: string, b: string): number {
    const pa = a.split('.').map(Number);
    const pb = b.split('.').map(Number);
    for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
    return 0;
}

/**
 * Parses an IP scope key as a user writes it (`ip:203.0.113.7`, `ip:[::1]`, `ip:::ffff:10.0.0.1`)
 * into its canonical key. Throws a message naming the key when what follows `ip:` is not an address.
 */
export function parseIpScopeKey(raw: string): string {
    const address = canonicalAddress(raw.slice(IP_SCOPE_PREFIX.length));
    if (address === undefined) {
        throw new Error(
            `scope key ${JSON.stringify(raw)} names no IP address: write 'ip:' and an IPv4 or IPv6 address ('ip:203.0.113.7', 'ip:2001:db8::1')`,
        );
    }
    return ipScopeKey(address);
}
