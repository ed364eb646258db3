/**
 * Import cycles across the workspace, type-only imports included (ESLint's import-x/no-cycle skips
 * those by design, and a type cycle still ties two modules together).
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
    forbidden: [
        {
            name: 'no-circular',
            severity: 'error',
            comment: 'Modules must not depend on each other in a circle, not even through types.',
            from: {},
            to: { circular: true },
        },
    ],
    options: {
        doNotFollow: { path: 'node_modules' },
        exclude: { path: '(^|/)(dist|node_modules)/' },
        tsPreCompilationDeps: true,
        tsConfig: { fileName: 'tsconfig.json' },
    },
};
