import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';
import { answerRequest } from '../helpers/answer-request';

const HOST = 'https://shop.example';

describe('a pace raised by an answer', () => {
    test('hands the next request out an interval of the new pace after the last one, not of the old', async () => {
        const clock = new ManualClock(1_700_000_000_000);
        const start = clock.now();
        // Paced at 2.5 req/s from the start, never refused: a quiet window doubles the pace.
        const manager = new ThrottlingRequestManager(
            { domains: 'all', clock, respectCrawlDelay: false, rampup: { initialRate: 2.5 } },
            memoryConfig(),
        );
        for (let i = 0; i < 6; i++) await manager.addRequest({ url: `${HOST}/${i}` });
        // Sent 400 ms apart, each answered 250 ms later.
        for (const sentAt of [0, 400, 800]) {
            clock.set(start + sentAt);
            const request = (await manager.fetchNextRequest())!;
            expect(request).not.toBeNull();
            clock.set(start + sentAt + 250);
            if (sentAt < 800) await answerRequest(manager, request, 200);
            else {
                expect(await manager.fetchNextRequest()).toBeNull();
                // The third answer closes a quiet window of 1 s: the pace doubles to 5 req/s. The next
                // request may leave 200 ms after the last (at 1,000 ms), so it goes at once rather than at 1,200.
                await answerRequest(manager, request, 200);
                expect((await manager.checkReadiness()).status).toBe('ready');
                expect(await manager.fetchNextRequest()).not.toBeNull();
            }
        }
    });
});
