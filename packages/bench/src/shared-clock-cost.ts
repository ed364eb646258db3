import type { SharedDomainClock } from 'crawlee-throttling';
import type { RedisDomainClock } from 'crawlee-throttling/redis';

/**
 * What one measured call is: a `reserve` alone, or what a dispatch of a key with a concurrency limit
 * costs with shared slots (take a slot, reserve the window, give the slot back at completion).
 */
export type CostCycle = 'reserve' | 'dispatch';

/** The cost of one shared clock's `reserve` (or dispatch cycle), measured in one process, calls one after another. */
export interface SharedClockCost {
    store: string;
    cycle: CostCycle;
    calls: number;
    /** Mean wall time per reserve, in µs. */
    meanUs: number;
    p50Us: number;
    p99Us: number;
    /** Commands sent to the store per reserve (Redis round trips), when the store can count them. */
    roundTripsPerCall?: number;
}

export interface SharedClockCostOptions {
    store: string;
    clock: SharedDomainClock;
    /** @default 2000 */
    calls?: number;
    /** Domain keys the calls cycle through. @default 50 */
    keys?: number;
    /** Calls before the measurement (script loading, file creation). @default 50 */
    warmup?: number;
    /** How many commands the store has sent so far (read before and after the measured calls). */
    commandsSent?: () => number;
    /** @default 'reserve' */
    cycle?: CostCycle;
}

/**
 * Times `calls` reserves that are all granted (each arms the next dispatch in the past, so every
 * call reads and writes, as a dispatch does), cycling over a few keys.
 */
export async function measureSharedClockCost(options: SharedClockCostOptions): Promise<SharedClockCost> {
    const { store, clock, calls = 2_000, keys = 50, warmup = 50, commandsSent, cycle = 'reserve' } = options;
    if (cycle === 'dispatch' && !(clock.acquireSlot && clock.releaseSlot))
        throw new Error(`${store} has no shared slots to measure a dispatch with`);
    const reserve = async (i: number) => {
        const key = `site-${i % keys}.example`;
        const now = Date.now();
        if (cycle === 'reserve') return void (await clock.reserve(key, now, now - 1));
        const slot = await clock.acquireSlot!(key, 1, 30_000, now);
        await clock.reserve(key, now, now - 1);
        if (slot.granted) await clock.releaseSlot!(key, slot.token);
    };
    for (let i = 0; i < warmup; i++) await reserve(i);
    const sentBefore = commandsSent?.();
    const took: number[] = [];
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) {
        const t = process.hrtime.bigint();
        await reserve(i);
        took.push(Number(process.hrtime.bigint() - t) / 1_000);
    }
    const totalUs = Number(process.hrtime.bigint() - started) / 1_000;
    took.sort((a, b) => a - b);
    const at = (q: number) => Math.round(took[Math.min(took.length - 1, Math.floor(q * took.length))]);
    const sent = commandsSent && sentBefore !== undefined ? commandsSent() - sentBefore : undefined;
    return {
        store,
        cycle,
        calls,
        meanUs: Math.round(totalUs / calls),
        p50Us: at(0.5),
        p99Us: at(0.99),
        roundTripsPerCall: sent === undefined ? undefined : sent / calls,
    };
}

/** One markdown table row per measurement. */
export function sharedClockCostTable(rows: SharedClockCost[]): string {
    const lines = [
        '| store | measured | calls | µs per call (mean) | p50 | p99 | round trips per call |',
        '|---|---|--:|--:|--:|--:|--:|',
    ];
    const what = { reserve: 'reserve', dispatch: 'dispatch: slot, reserve, release' };
    for (const r of rows)
        lines.push(
            `| ${r.store} | ${what[r.cycle]} | ${r.calls} | ${r.meanUs} | ${r.p50Us} | ${r.p99Us} | ${r.roundTripsPerCall ?? 'n/a'} |`,
        );
    return lines.join('\n');
}

/**
 * Counts what a Redis clock's connection writes (every EVALSHA, and an EVAL after a NOSCRIPT): one
 * command per round trip. Returns the running count.
 */
export function countRedisCommands(redisClock: RedisDomainClock): () => number {
    let sent = 0;
    const client = redisClock.client;
    const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown;
    client.sendCommand = ((...args: unknown[]) => {
        sent += 1;
        return send(...args);
    }) as typeof client.sendCommand;
    return () => sent;
}
