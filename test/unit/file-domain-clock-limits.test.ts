import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock } from 'crawlee-throttling';

/**
 * FileDomainClock shares what RedisDomainClock shares (refusals, concurrency leases, quotas), deciding
 * alike; here on a manual clock, so every expiry is exact.
 */
describe('FileDomainClock shared limits', () => {
    let dir: string;
    let clock: ManualClock;
    const host = () => new FileDomainClock(dir, { clock });
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'file-limits-'));
        clock = new ManualClock();
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    test('a refusal escalates once per burst across processes; a server wait only lengthens the backoff', () => {
        const [a, b] = [host(), host()];
        const policy = { baseMs: 1_000, maxMs: 60_000 };
        const t0 = clock.now();
        expect(a.recordRefusal('a.com', policy)).toEqual({
            escalated: true,
            backoffUntil: t0 + 1_000,
            level: 1,
            waitMs: 1_000,
        });
        expect(b.recordRefusal('a.com', policy)).toMatchObject({ escalated: false, level: 1 });
        expect(b.recordRefusal('a.com', { ...policy, waitMs: 3_000 })).toMatchObject({
            escalated: false,
            backoffUntil: t0 + 3_000,
        });
        expect(b.read('a.com').backoffUntil).toBe(t0 + 3_000);
        // The next burst, seen first by B, escalates the shared level: B waits 2 s, not its own first step.
        // (The quiet period that starts the level over moved with the lengthened backoff.)
        clock.advance(3_000);
        expect(b.recordRefusal('a.com', policy)).toMatchObject({ escalated: true, level: 2, waitMs: 2_000 });
        // A quiet period as long as the last backoff after it: the level starts over.
        clock.advance(2_000 + 2_000);
        expect(a.recordRefusal('a.com', policy)).toMatchObject({ escalated: true, level: 1, waitMs: 1_000 });
    });

    test('concurrency leases are shared, run out unless renewed, and a release frees one at once', () => {
        const [a, b] = [host(), host()];
        const one = a.acquireSlot('a.com', 2, 30_000);
        const two = b.acquireSlot('a.com', 2, 10_000);
        expect(one).toMatchObject({ granted: true, held: 1 });
        expect(two).toMatchObject({ granted: true, held: 2, expiresAt: clock.now() + 10_000 });
        expect(a.acquireSlot('a.com', 2, 30_000)).toEqual({ granted: false, notBefore: clock.now() + 10_000, held: 2 });

        clock.advance(5_000);
        expect(one.granted && a.renewSlot('a.com', one.token, 30_000)).toBe(true);
        // B died: its lease runs out, and its slot is taken by another.
        clock.advance(5_000);
        expect(two.granted && b.renewSlot('a.com', two.token, 30_000)).toBe(false);
        expect(b.acquireSlot('a.com', 2, 30_000)).toMatchObject({ granted: true, held: 2 });
        // Renewed at 5 s for 30 s: A's slot still counts at 34 s.
        clock.advance(24_000);
        expect(b.acquireSlot('a.com', 2, 30_000)).toMatchObject({ granted: false, held: 2 });
        expect(one.granted && a.releaseSlot('a.com', one.token)).toBe(true);
        expect(one.granted && a.releaseSlot('a.com', one.token)).toBe(false);
        expect(b.acquireSlot('a.com', 2, 30_000)).toMatchObject({ granted: true, held: 2 });
    });

    test('a quota is spent across processes in fixed windows, and a reported cost corrects it', () => {
        const [a, b] = [host(), host()];
        clock.set(Math.ceil(clock.now() / 60_000) * 60_000);
        const windowEnd = clock.now() + 60_000;
        expect(a.spendQuota('api', 3, 5, 60_000)).toEqual({ granted: true, spent: 3, windowEndsAt: windowEnd });
        expect(b.spendQuota('api', 3, 5, 60_000)).toEqual({ granted: false, spent: 3, notBefore: windowEnd });
        // The first request cost 1 in the end: room for the second.
        expect(a.adjustQuota('api', -2, 60_000, clock.now())).toBe(1);
        expect(b.spendQuota('api', 3, 5, 60_000)).toMatchObject({ granted: true, spent: 4 });
        expect(a.adjustQuota('api', -10, 60_000, clock.now())).toBe(0);
        clock.advance(60_000);
        expect(b.spendQuota('api', 9, 5, 60_000)).toMatchObject({ granted: true, spent: 9 });
        // A correction of a window that a later one replaced changes nothing.
        expect(a.adjustQuota('api', -5, 60_000, clock.now() - 1)).toBe(0);
        expect(b.spendQuota('api', 1, 5, 60_000)).toMatchObject({ granted: false, spent: 9 });
    });

    test('a file of an earlier release (the two clocks only) is read as it was, the rest empty', () => {
        const a = host();
        writeFileSync(a.fileOf('a.com'), JSON.stringify({ nextAt: clock.now() + 500, backoffUntil: 7 }));
        expect(a.acquireSlot('a.com', 1, 1_000)).toMatchObject({ granted: true, held: 1 });
        expect(a.readRecord('a.com')).toMatchObject({ nextAt: clock.now() + 500, backoffUntil: 7, level: 0 });
        expect(a.reserve('a.com', clock.now(), clock.now() + 1)).toEqual({
            granted: false,
            notBefore: clock.now() + 500,
        });
    });

    test('bad arguments are named', () => {
        const a = host();
        expect(() => a.acquireSlot('a.com', 1.5, 1_000)).toThrow(/acquireSlot limit must be a whole number > 0/);
        expect(() => a.spendQuota('a.com', -1, 5, 1_000)).toThrow(/spendQuota cost must be a number >= 0, got -1/);
        expect(() => a.adjustQuota('a.com', Number.NaN, 1_000, 0)).toThrow(/adjustQuota delta must be a finite/);
        expect(() => a.recordRefusal('a.com', { baseMs: 0, maxMs: 1 })).toThrow(/recordRefusal baseMs must be/);
    });
});
