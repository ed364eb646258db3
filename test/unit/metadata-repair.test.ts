/**
 * A queue's metadata file left unreadable by two interleaved writes (memory-storage writes it unlocked
 * on nearly every call) is repaired on open, so a resumed crawl starts instead of throwing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { leadingJsonObject } from '../../packages/throttling/src/queues/metadata-repair';

let dir: string;
const clients: MemoryStorage[] = [];
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'metadata-repair-'));
});
afterEach(async () => {
    for (const client of clients.splice(0)) await client.teardown();
    rmSync(dir, { recursive: true, force: true });
});

function managerOn(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: true });
    clients.push(storage);
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    return new ThrottlingRequestManager({ domains: 'all', clock: new ManualClock(0), ...options }, config);
}

/** What two interleaved writes leave: the shorter, later one over the start of the longer one. */
function interleave(folder: string): string {
    const path = join(dir, 'request_queues', folder, '__metadata__.json');
    const written = readFileSync(path, 'utf8');
    const longer = JSON.stringify({ ...JSON.parse(written), forefrontRequestIds: ['a'.repeat(40)] }, null, '\t');
    writeFileSync(path, written + longer.slice(written.length));
    expect(() => JSON.parse(readFileSync(path, 'utf8'))).toThrow(SyntaxError);
    return written;
}

async function urlsOf(manager: ThrottlingRequestManager): Promise<string[]> {
    const got: string[] = [];
    for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
        got.push(r.url);
        await manager.markRequestHandled(r);
    }
    return got.sort();
}

describe('leadingJsonObject', () => {
    test('keeps the whole write that leads an interleaved file', () => {
        expect(leadingJsonObject('{"a":1,"b":"}{"}ail":2}')).toBe('{"a":1,"b":"}{"}');
        expect(leadingJsonObject('{"a":{"b":"x\\"}"}}, "c": 3}')).toBe('{"a":{"b":"x\\"}"}}');
    });

    test('leaves readable and unrecoverable files alone', () => {
        expect(leadingJsonObject('{"a":1}\n')).toBeUndefined();
        expect(leadingJsonObject('')).toBeUndefined();
        expect(leadingJsonObject('{"a":')).toBeUndefined();
        expect(leadingJsonObject('[1]tail')).toBeUndefined();
    });
});

describe('opening a queue whose metadata two writes interleaved', () => {
    test('the default queue: a resumed crawl starts, with every request kept', async () => {
        const first = managerOn();
        await first.addRequestsBatched(['https://a.com/1', 'https://b.com/1'], { waitForAllRequestsToBeAdded: true });
        await first.persistState();
        for (const client of clients) await client.teardown();
        const written = interleave('default');

        const resumed = managerOn();
        expect(await urlsOf(resumed)).toEqual(['https://a.com/1', 'https://b.com/1']);
        const repaired = readFileSync(join(dir, 'request_queues', 'default', '__metadata__.json'), 'utf8');
        expect(JSON.parse(repaired).id).toBe(JSON.parse(written).id);
    });

    test('a throttled-<domain> queue of the per-domain layout', async () => {
        const first = managerOn({ queueLayout: 'perDomain' });
        await first.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await first.persistState();
        for (const client of clients) await client.teardown();
        interleave('throttled-a.com');

        const resumed = managerOn({ queueLayout: 'perDomain' });
        expect(await urlsOf(resumed)).toEqual(['https://a.com/1', 'https://a.com/2']);
    });
});
