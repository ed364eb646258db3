import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';
import {
    countRedisCommands,
    measureSharedClockCost,
    sharedClockCostTable,
} from '../../packages/bench/src/shared-clock-cost';
import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';

describeRedis('shared clock cost per reserve', () => {
    it('takes one Redis round trip per reserve (three per dispatch with a shared slot), and prints µs beside FileDomainClock', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'clock-cost-'));
        const prefix = uniquePrefix('cost');
        const redisClock = new RedisDomainClock({ url: REDIS_URL, keyPrefix: prefix });
        const commandsSent = countRedisCommands(redisClock);
        try {
            const file = await measureSharedClockCost({ store: 'FileDomainClock', clock: new FileDomainClock(dir) });
            const redis = await measureSharedClockCost({
                store: 'RedisDomainClock (localhost)',
                clock: redisClock,
                commandsSent,
            });
            const dispatch = await measureSharedClockCost({
                store: 'RedisDomainClock (localhost)',
                clock: redisClock,
                commandsSent,
                cycle: 'dispatch',
            });
            const table = sharedClockCostTable([file, redis, dispatch]);
            console.log(`Shared clock cost, ${new Date().toISOString()}\n${table}`);
            expect(redis.roundTripsPerCall).toBe(1);
            // A dispatch with a shared slot: the slot, the window, the slot back.
            expect(dispatch.roundTripsPerCall).toBe(3);
        } finally {
            await redisClock.close();
            rmSync(dir, { recursive: true, force: true });
            const admin = testRedis();
            await deletePrefix(admin, prefix);
            await admin.quit();
        }
    });
});
