import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, RedisDomainClock } from 'crawlee-throttling';
import {
    countRedisCommands,
    measureSharedClockCost,
    sharedClockCostTable,
} from '../../packages/bench/src/shared-clock-cost';
import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';

describeRedis('shared clock cost per reserve', () => {
    it('takes one Redis round trip per reserve, and prints µs beside FileDomainClock', async () => {
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
            console.log(`Shared clock cost, ${new Date().toISOString()}\n${sharedClockCostTable([file, redis])}`);
            expect(redis.roundTripsPerCall).toBe(1);
        } finally {
            await redisClock.close();
            rmSync(dir, { recursive: true, force: true });
            const admin = testRedis();
            await deletePrefix(admin, prefix);
            await admin.quit();
        }
    });
});
