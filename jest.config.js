/** @type {import('jest').Config} */
module.exports = {
    testEnvironment: 'node',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.test.ts'],
    transform: {
        '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
    },
    moduleNameMapper: {
        '^crawlee-throttling$': '<rootDir>/packages/throttling/src/index.ts',
        '^crawlee-throttling/redis$': '<rootDir>/packages/throttling/src/redis.ts',
        '^@crawlee-throttling/polite-web$': '<rootDir>/packages/polite-web/src/index.ts',
        '^@crawlee-throttling/crawler-processes$': '<rootDir>/packages/crawler-processes/src/index.ts',
    },
    // End-to-end tests start real crawlers and servers; give them room on a 2-core machine.
    testTimeout: 60_000,
    maxWorkers: 2,
    setupFiles: ['<rootDir>/test/helpers/jest-setup.ts'],
    reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
