import type { LogEntry } from '@crawlee-throttling/polite-web';

import { refusalGaps } from '../../packages/bench/src/frontier-refusal-gaps';

const at = (time: number, client: string, refused = false): LogEntry => ({
    site: 'paced-0.example',
    path: `/page/${time}`,
    time,
    status: refused ? 429 : 200,
    inFlightAtArrival: 1,
    client,
    ...(refused ? { refused: true as const } : {}),
});

describe('B8 refusal gaps', () => {
    it('measures each refusal from the last accepted arrival, with its process and whether that one was late', () => {
        const log: LogEntry[] = [
            at(0, '1'),
            at(100, '2'),
            // 100 ms interval: this accepted one came 10 ms late...
            at(210, '1'),
            // ...and the next process's on-time arrival is refused, 90 ms after it.
            at(300, '2', true),
            at(410, '2'),
            // Refused 5 ms after an on-time accepted arrival of the same process.
            at(415, '2', true),
            { ...at(420, '1', true), site: 'free-1.example' },
        ];
        const gaps = refusalGaps(log, ['paced-0.example'], 100);
        expect(gaps.refused).toBe(2);
        expect(gaps.gapMinMs).toBe(5);
        expect(gaps.otherProcessShare).toBe(0.5);
        expect(gaps.afterLateShare).toBe(1);
        expect(gaps.acceptedGapP50Ms).toBeGreaterThanOrEqual(100);
    });

    it('is empty where nothing was refused', () => {
        expect(refusalGaps([at(0, '1'), at(100, '1')], ['paced-0.example'], 100)).toMatchObject({
            refused: 0,
            otherProcessShare: 0,
        });
    });
});
