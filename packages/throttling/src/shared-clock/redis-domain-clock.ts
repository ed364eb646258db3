import { randomUUID } from 'node:crypto';

import { SharedClockError } from '../core/errors';

export { SharedClockError } from '../core/errors';
import type { Clock } from '../core/clock';
import type { SharedClocks, SharedDomainClock, SharedReservation } from '../core/shared-domain-clock';
import type { RedisClockClient, RedisDomainClockOptions } from './redis-clock-options';
import { resolveRedisClockOptions } from './redis-clock-options';
import type { RedisClockKeys } from './redis-keys';
import { redisClockKeys } from './redis-keys';
import type { RedisClockScript } from './redis-scripts';
import { REDIS_CLOCK_SCRIPTS } from './redis-scripts';
import { asNumbers, toDelta } from './redis-clock-answers';
import {
    checkFinite,
    checkPositive,
    checkRefusalPolicy,
    checkSpend,
    checkTally,
    MAX_SHARED_LEVEL,
} from './shared-limit-decisions';
import type {
    QuotaSpend,
    RefusalPolicy,
    SharedRate,
    SharedRefusal,
    SharedTally,
    SlotLease,
    TallyCounts,
} from '../core/shared-limit-types';

/** How many granted reservations are remembered per clock so that `settle` can recognise its lease. */
const MAX_REMEMBERED_LEASES = 10_000;

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/**
 * A {@link SharedDomainClock} in Redis, for crawler processes on several machines. Each decision is
 * one Lua script (atomic on the server) that takes its time from Redis `TIME`: hosts pass durations
 * from their own `now` and get times back in their own clock, so hosts whose clocks differ keep one
 * pace. All keys of one domain key share a hash tag, so it works on Redis Cluster. Besides the two
 * clocks it offers shared refusal escalation, concurrency leases and quotas (see the methods).
 */
export class RedisDomainClock implements SharedDomainClock {
    /** The ioredis connection (the one given, or the one this clock opened). */
    readonly client: RedisClockClient;
    readonly keyPrefix: string;
    private readonly ownsClient: boolean;
    private readonly idleTtlMs: number;
    private readonly clock: Clock;
    // Per key, the last reservation granted here: its host time and the Redis time stored for it.
    private readonly leases = new Map<string, { host: number; redis: number }>();

    constructor(options: RedisDomainClockOptions = {}) {
        const resolved = resolveRedisClockOptions(options);
        this.client = resolved.client;
        this.ownsClient = resolved.ownsClient;
        this.keyPrefix = resolved.keyPrefix;
        this.idleTtlMs = resolved.idleTtlMs;
        this.clock = resolved.clock;
        for (const [name, { numberOfKeys, lua }] of Object.entries(REDIS_CLOCK_SCRIPTS))
            this.client.defineCommand(name, numberOfKeys === undefined ? { lua } : { numberOfKeys, lua });
        // The calls a lost connection fails say so (see onSharedClockError); without a listener
        // ioredis also prints every reconnect attempt as an unhandled error.
        if (this.ownsClient) this.client.on('error', () => undefined);
    }

    /** The Redis keys of `key` (all in one hash slot). */
    keysOf(key: string): RedisClockKeys {
        return redisClockKeys(this.keyPrefix, key);
    }

    async reserve(key: string, now: number, nextAt: number): Promise<SharedReservation> {
        return (await this.reserveOne(key, now, nextAt)).reservation;
    }

    /**
     * Reserves the next dispatch of several keys (one request's scopes) all-or-nothing: granted
     * when every key's clocks allow `now`, and then each is armed for its `nextAt`; otherwise
     * nothing changes and `notBefore` is when the last of them allows it. On Redis Cluster, keys in
     * different hash slots cannot share a script: they are reserved one by one and the ones granted
     * are given back when another refuses (another host may see them held for that moment).
     */
    async reserveMany(entries: readonly { key: string; nextAt: number }[], now: number): Promise<SharedReservation> {
        const wanted = new Map<string, number>();
        for (const { key, nextAt } of entries) wanted.set(key, Math.max(wanted.get(key) ?? -Infinity, nextAt));
        if (wanted.size === 0) return { granted: true };
        if (wanted.size === 1 || this.client.isCluster) return this.reserveEach([...wanted], now);
        const keys = [...wanted.keys()];
        const label = keys.join(', ');
        const answer = await this.run(
            'reserveMany',
            label,
            'crawleeThrottlingReserveMany',
            [
                keys.length,
                ...keys.map((k) => this.keysOf(k).clock),
                this.idleTtlMs,
                ...keys.map((k) => toDelta(wanted.get(k)!, now)),
            ],
            false,
        );
        const [granted, redisNow, ...armed] = answer;
        if (!granted) return { granted: false, notBefore: now + (armed[0] - redisNow) };
        keys.forEach((k, i) => this.remember(k, wanted.get(k)!, armed[i]));
        return { granted: true };
    }

    async extend(key: string, clocks: { nextAt?: number; backoffUntil?: number }): Promise<void> {
        const now = this.clock.now();
        const delta = (t: number | undefined) => (t === undefined ? '' : toDelta(t, now));
        await this.run('extend', key, 'crawleeThrottlingExtend', [
            this.keysOf(key).clock,
            delta(clocks.nextAt),
            delta(clocks.backoffUntil),
        ]);
    }

    async settle(key: string, leasedUntil: number, nextAt: number): Promise<void> {
        const lease = this.leases.get(key);
        const ours = lease !== undefined && lease.host === leasedUntil ? lease.redis : '';
        await this.run('settle', key, 'crawleeThrottlingSettle', [
            this.keysOf(key).clock,
            ours,
            toDelta(nextAt, this.clock.now()),
            'rel',
        ]);
        // Forgotten only once ended: a settle that failed (an outage) and is sent again must still
        // recognise its lease, or it could only move the clock forward and the lease would run its course.
        if (ours !== '' && this.leases.get(key) === lease) this.leases.delete(key);
    }

    /**
     * Records a refusal (429 and friends) of `key` for all hosts. The backoff escalates once per
     * burst: while the shared backoff runs, refusals from any host do not escalate, and a server
     * wait (`waitMs`) may only lengthen it. Outside it the level rises (from 0 again after a quiet
     * period as long as the last backoff) and the backoff lasts `waitMs`, or `baseMs × factor^(level-1)`,
     * at most `maxMs`. No jitter: hosts that want it add their own.
     */
    async recordRefusal(key: string, policy: RefusalPolicy, now = this.clock.now()): Promise<SharedRefusal> {
        checkRefusalPolicy(policy);
        const wait = policy.waitMs !== undefined && policy.waitMs > 0 ? Math.ceil(policy.waitMs) : '';
        const [escalated, redisNow, backoff, level, delay] = await this.run(
            'recordRefusal',
            key,
            'crawleeThrottlingRecordRefusal',
            [this.keysOf(key).clock, wait, policy.baseMs, policy.maxMs, policy.factor ?? 2, MAX_SHARED_LEVEL],
        );
        return { escalated: escalated === 1, backoffUntil: now + (backoff - redisNow), level, waitMs: delay };
    }

    /**
     * Takes one of `limit` concurrency slots of `key`, shared by all hosts, for at most `leaseMs`:
     * a host that dies holding it loses it when the lease runs out. Give it back with
     * {@link releaseSlot}; renew a long one with {@link renewSlot}.
     */
    async acquireSlot(key: string, limit: number, leaseMs: number, now = this.clock.now()): Promise<SlotLease> {
        checkPositive('acquireSlot limit', limit, true);
        checkPositive('acquireSlot leaseMs', leaseMs, false);
        const token = randomUUID();
        const [granted, redisNow, at, held] = await this.run('acquireSlot', key, 'crawleeThrottlingAcquireSlot', [
            this.keysOf(key).slots,
            limit,
            Math.ceil(leaseMs),
            token,
        ]);
        const hostAt = now + (at - redisNow);
        return granted
            ? { granted: true, token, expiresAt: hostAt, held }
            : { granted: false, notBefore: hostAt, held };
    }

    /** Extends a slot lease to `leaseMs` from now; false when it had already run out or was released. */
    async renewSlot(key: string, token: string, leaseMs: number): Promise<boolean> {
        checkPositive('renewSlot leaseMs', leaseMs, false);
        const [held] = await this.run('renewSlot', key, 'crawleeThrottlingRenewSlot', [
            this.keysOf(key).slots,
            Math.ceil(leaseMs),
            token,
        ]);
        return held === 1;
    }

    /** Gives a slot back; false when it was no longer held (it ran out). */
    async releaseSlot(key: string, token: string): Promise<boolean> {
        const [removed] = await this.run('releaseSlot', key, 'crawleeThrottlingReleaseSlot', [
            this.keysOf(key).slots,
            token,
        ]);
        return removed === 1;
    }

    /**
     * Spends `cost` of the quota of `key` (`limit` per `windowMs`, windows aligned to Redis time),
     * all-or-nothing, shared by all hosts. An empty window takes any cost, so one oversized request
     * still goes, alone.
     */
    async spendQuota(
        key: string,
        cost: number,
        limit: number,
        windowMs: number,
        now = this.clock.now(),
    ): Promise<QuotaSpend> {
        checkSpend(cost, limit, windowMs);
        const [granted, redisNow, ends, spent] = await this.run('spendQuota', key, 'crawleeThrottlingSpendQuota', [
            this.keysOf(key).quota,
            cost,
            limit,
            windowMs,
        ]);
        const hostEnd = now + (ends - redisNow);
        return granted
            ? { granted: true, spent, windowEndsAt: hostEnd }
            : { granted: false, spent, notBefore: hostEnd };
    }

    /**
     * Corrects a spend made at `spentAt` (this host's time) by `delta` while its window is the one
     * kept, never below 0; answers that window's spend after it (0 when a later window replaced it).
     */
    async adjustQuota(
        key: string,
        delta: number,
        windowMs: number,
        spentAt: number,
        now = this.clock.now(),
    ): Promise<number> {
        checkFinite('adjustQuota delta', delta);
        checkPositive('adjustQuota windowMs', windowMs, true);
        const [, , spent] = await this.run('adjustQuota', key, 'crawleeThrottlingAdjustQuota', [
            this.keysOf(key).quota,
            delta,
            windowMs,
            toDelta(spentAt, now),
        ]);
        return spent;
    }

    /**
     * Offers the rate (requests per second, all hosts together) learned for `key` at `at` (this
     * host's time) and answers the rate in force: the one learned latest, at a tie the lower. One
     * script; the key expires `idleTtlMs` after the latest offer.
     */
    async shareRate(key: string, rate: number, at: number, now = this.clock.now()): Promise<SharedRate> {
        checkPositive('shareRate rate', rate, false);
        const [, redisNow, kept, keptAt] = await this.run('shareRate', key, 'crawleeThrottlingShareRate', [
            this.keysOf(key).rate,
            String(rate),
            toDelta(at, now),
        ]);
        return { rate: kept, at: now + (keptAt - redisNow) };
    }

    /** The rate in force for `key` (this host's time), or undefined when none was shared or it expired. */
    async readRate(key: string, now = this.clock.now()): Promise<SharedRate | undefined> {
        const [found, redisNow, rate, at] = await this.run('readRate', key, 'crawleeThrottlingReadRate', [
            this.keysOf(key).rate,
        ]);
        return sharedRateOf(found, rate, at, now, redisNow);
    }

    /**
     * Adds this host's dispatches and accepted answers of `key` to every host's, and answers the
     * totals with the rate in force (this host's time). One script, in the rate's hash; the key
     * expires `idleTtlMs` after the latest call.
     */
    async tally(key: string, add: TallyCounts, now = this.clock.now()): Promise<SharedTally> {
        checkTally(add);
        const [, redisNow, dispatched, answered, found, rate, at] = await this.run(
            'tally',
            key,
            'crawleeThrottlingTally',
            [this.keysOf(key).rate, add.dispatched, add.answered],
        );
        return tallyOf(dispatched, answered, sharedRateOf(found, rate, at, now, redisNow));
    }

    /** The shared clocks of `key` in this host's time (reports, tests); 0 for a clock never set. */
    async read(key: string): Promise<SharedClocks & { level: number; decayAt: number }> {
        const now = this.clock.now();
        const [, redisNow, next, backoff, level, decay] = await this.run('read', key, 'crawleeThrottlingRead', [
            this.keysOf(key).clock,
        ]);
        const host = (t: number) => (t === 0 ? 0 : now + (t - redisNow));
        return { nextAt: host(next), backoffUntil: host(backoff), level, decayAt: host(decay) };
    }

    /** Closes the connection this clock opened (resolves once it is closed); a client given in the options is left open. */
    async close(): Promise<void> {
        const client = this.client;
        if (!this.ownsClient || client.status === 'end') return;
        // Between reconnect attempts there is no socket to wait for: stopping the timer is enough.
        const live = ['connecting', 'connect', 'ready'].includes(client.status);
        const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
        // QUIT lets answers in flight arrive; a connection not yet (or no longer) up has none.
        if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
        else client.disconnect();
        if (live) await ended;
    }

    private async reserveEach(entries: [string, number][], now: number): Promise<SharedReservation> {
        const taken: { key: string; armed: number; previous: number }[] = [];
        for (const [key, nextAt] of entries) {
            const { reservation, armed, previous } = await this.reserveOne(key, now, nextAt);
            if (!reservation.granted) {
                await Promise.all(taken.map((t) => this.undo(t.key, t.armed, t.previous)));
                return { granted: false, notBefore: reservation.notBefore };
            }
            taken.push({ key, armed, previous });
        }
        return { granted: true };
    }

    /**
     * One key's reservation, with the key's tally when a host tallied it; `armed` and `previous`: its
     * `next` after and before, in Redis time (for an undo when granted).
     */
    private async reserveOne(
        key: string,
        now: number,
        nextAt: number,
    ): Promise<{ reservation: SharedReservation; armed: number; previous: number }> {
        const keys = this.keysOf(key);
        const answer = await this.run(
            'reserve',
            key,
            'crawleeThrottlingReserve',
            [keys.clock, keys.rate, this.idleTtlMs, toDelta(nextAt, now)],
            false,
        );
        const [granted, redisNow, value, previous, tallied, dispatched, answered, found, rate, at] = answer;
        const counts =
            tallied === 1 ? { tally: tallyOf(dispatched, answered, sharedRateOf(found, rate, at, now, redisNow)) } : {};
        if (!granted) {
            const reservation = { granted: false as const, notBefore: now + (value - redisNow), ...counts };
            return { reservation, armed: value, previous };
        }
        this.remember(key, nextAt, value);
        return { reservation: { granted: true, ...counts }, armed: value, previous };
    }

    private async undo(key: string, armed: number, previous: number): Promise<void> {
        this.leases.delete(key);
        await this.run('undo', key, 'crawleeThrottlingSettle', [this.keysOf(key).clock, armed, previous, 'abs']);
    }

    private remember(key: string, host: number, redis: number): void {
        this.leases.delete(key);
        if (this.leases.size >= MAX_REMEMBERED_LEASES) this.leases.delete(this.leases.keys().next().value!);
        this.leases.set(key, { host, redis });
    }

    /**
     * Runs a script; the idle TTL goes in as ARGV[1] after the keys (or is already placed, `placeTtl`
     * false). Wraps a failure in a {@link SharedClockError} naming the call and the key.
     */
    private async run(
        call: string,
        key: string,
        script: RedisClockScript,
        args: (string | number)[],
        placeTtl = true,
    ): Promise<number[]> {
        const command = (this.client as unknown as Record<RedisClockScript, ScriptCall>)[script];
        const full = placeTtl ? [args[0], this.idleTtlMs, ...args.slice(1)] : args;
        try {
            return asNumbers(await command.apply(this.client, full));
        } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            throw new SharedClockError(`RedisDomainClock: ${call} of ${key} failed: ${reason}`, { cause: error });
        }
    }
}

/** A rate a script answered as `found, rate, at` (Redis time), in the host's time; undefined when none was found. */
function sharedRateOf(found: number, rate: number, at: number, now: number, redisNow: number): SharedRate | undefined {
    return found === 1 ? { rate, at: now + (at - redisNow) } : undefined;
}

/** A key's tally, with the rate in force when there is one. */
function tallyOf(dispatched: number, answered: number, rate: SharedRate | undefined): SharedTally {
    return { dispatched, answered, ...(rate ? { rate } : {}) };
}
