/**
 * A purge on start survives memory-storage's own race: opening a queue schedules an unawaited rewrite
 * of its metadata file, which can land in the folder while the drop removes it (`rm` then fails with
 * ENOTEMPTY). The purge still ends with the folder gone and the queue usable afresh.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

let dir: string;
const clients: MemoryStorage[] = [];
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drop-queue-race-'));
});
afterEach(async () => {
    for (const client of clients.splice(0)) await client.teardown();
    rmSync(dir, { recursive: true, force: true });
});

function run(purgeOnStart: boolean) {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: true });
    clients.push(storage);
    const config = new Configuration({ storageClient: storage, purgeOnStart, persistStorage: true });
    const manager = new ThrottlingRequestManager(
        { domains: 'all', queueLayout: 'perDomain', clock: new ManualClock(0) },
        config,
    );
    return { storage, manager };
}

/** Makes the storage's drop of `name` fail as the race does: the folder removed, then written again. */
function raceDropOf(storage: MemoryStorage, name: string, error: NodeJS.ErrnoException): { raced: number } {
    const seen = { raced: 0 };
    const folder = join(dir, 'request_queues', name);
    const open = storage.requestQueue.bind(storage);
    storage.requestQueue = (id: string) => {
        const client = open(id);
        const drop = client.delete.bind(client);
        client.delete = async () => {
            const ours = existsSync(folder);
            await drop();
            if (!ours || existsSync(folder)) return; // Another queue's drop.
            seen.raced += 1;
            mkdirSync(folder, { recursive: true });
            writeFileSync(join(folder, '__metadata__.json'), '{}');
            throw error;
        };
        return client;
    };
    return seen;
}

const folderRace = () =>
    Object.assign(new Error('ENOTEMPTY: directory not empty, rmdir'), { code: 'ENOTEMPTY', syscall: 'rmdir' });

test('a drop that meets the metadata write still purges, and the queue starts afresh', async () => {
    const first = run(false);
    await first.manager.addRequestsBatched(['http://x.test/1', 'http://x.test/2'], {
        waitForAllRequestsToBeAdded: true,
    });
    await first.manager.persistState();
    await first.storage.teardown();
    expect(existsSync(join(dir, 'request_queues', 'throttled-x.test'))).toBe(true);

    const second = run(true);
    const seen = raceDropOf(second.storage, 'throttled-x.test', folderRace());
    expect(await second.manager.isFinished()).toBe(true);
    expect(seen.raced).toBe(1);
    expect(existsSync(join(dir, 'request_queues', 'throttled-x.test'))).toBe(false);

    // The same URL is new again, and served: Crawlee's cached instance of the dropped queue was closed.
    const added = await second.manager.addRequest({ url: 'http://x.test/1' });
    expect(added.wasAlreadyPresent).toBe(false);
    expect((await second.manager.fetchNextRequest())?.url).toBe('http://x.test/1');
});

test('any other failure of a drop is thrown', async () => {
    const first = run(false);
    await first.manager.addRequest({ url: 'http://x.test/1' });
    await first.manager.persistState();
    await first.storage.teardown();

    const second = run(true);
    raceDropOf(
        second.storage,
        'throttled-x.test',
        Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }),
    );
    await expect(second.manager.isFinished()).rejects.toThrow('EACCES');
});
