import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The page npm shows is generated from the repository's README (scripts/write-npm-readme.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { npmReadme, wantedReadme, NPM_README } = require('../../packages/throttling/scripts/write-npm-readme.js');

const packageJson = JSON.parse(readFileSync(join(__dirname, '../../packages/throttling/package.json'), 'utf8'));

describe("the npm package's page", () => {
    test('is the committed README generated from the current root README', () => {
        expect(readFileSync(NPM_README, 'utf8')).toBe(wantedReadme());
    });

    test('has no relative link (npm resolves none) and no contributors section', () => {
        const page: string = readFileSync(NPM_README, 'utf8');
        const targets = [...page.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
        expect(targets.length).toBeGreaterThan(5);
        for (const target of targets) expect(target).toMatch(/^(https?:|#|mailto:)/);
        expect(page).not.toContain('## Working on it');
    });

    test('relative links become links on the repository site, folders as trees', () => {
        expect(npmReadme('[a](docs/a.md) [b](docs/crawlers/) [c](https://x.dev) [d](#usage)')).toBe(
            '[a](https://github.com/crawlee-throttling/crawlee-throttling/blob/main/docs/a.md) ' +
                '[b](https://github.com/crawlee-throttling/crawlee-throttling/tree/main/docs/crawlers/) ' +
                '[c](https://x.dev) [d](#usage)',
        );
    });

    test('package.json names the repository, its home page and where bugs go', () => {
        expect(packageJson.repository).toMatchObject({ type: 'git', directory: 'packages/throttling' });
        expect(packageJson.homepage).toMatch(/^https:\/\//);
        expect(packageJson.bugs.url).toMatch(/^https:\/\/.*\/issues$/);
    });
});
