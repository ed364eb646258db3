/**
 * Two projects: `unit` (a manual clock, memory storage, no child processes, no `dist`) and `e2e`
 * (real crawlers against real servers on 127.0.0.1, child processes, the built package). `npm test`
 * runs them one after the other: `jest --selectProjects unit`, then `--selectProjects e2e`.
 * @type {import('jest').Config}
 */
const shared = {
    testEnvironment: 'node',
    transform: {
        '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
    },
    moduleNameMapper: {
        '^crawlee-throttling$': '<rootDir>/packages/throttling/src/index.ts',
        '^crawlee-throttling/redis$': '<rootDir>/packages/throttling/src/redis.ts',
        '^crawlee-throttling/types$': '<rootDir>/packages/throttling/src/types.ts',
        '^@crawlee-throttling/polite-web$': '<rootDir>/packages/polite-web/src/index.ts',
        '^@crawlee-throttling/crawler-processes$': '<rootDir>/packages/crawler-processes/src/index.ts',
    },
    setupFiles: ['<rootDir>/test/helpers/jest-setup.ts'],
};

module.exports = {
    projects: [
        {
            ...shared,
            displayName: 'unit',
            roots: ['<rootDir>/test'],
            testMatch: ['<rootDir>/test/{unit,parity,bench}/**/*.test.ts'],
        },
        {
            ...shared,
            displayName: 'e2e',
            roots: ['<rootDir>/test'],
            testMatch: ['<rootDir>/test/{e2e,polite-web}/**/*.test.ts'],
            // End-to-end tests start real crawlers and servers; give them room on a 2-core machine.
            testTimeout: 60_000,
        },
    ],
    testTimeout: 60_000,
    maxWorkers: 2,
    reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
