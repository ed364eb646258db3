/**
 * Import rules across the workspace, type-only imports included (ESLint's import-x/no-cycle skips
 * those by design, and a type import ties two modules together as much as a value import).
 *
 * The folders of packages/throttling/src form layers, written once below, lowest first. A file may
 * import its own folder and the folders of lower layers; an import into a higher layer, or into
 * another folder of its own layer, fails the lint. The files directly in src/ (the façade) sit on
 * top. docs/architecture.md ("Layers") says why each folder sits where it does.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const SRC = '^packages/throttling/src/';

const LAYERS = [
    ['core'],
    ['ip', 'routing', 'response', 'scheduling'],
    ['options'],
    ['pacing'],
    ['robots'],
    ['config'],
    ['scopes'],
    ['shared-clock', 'queues'],
    ['layout'],
    ['dispatch'],
    ['persistence'],
    ['readiness'],
    ['redis-storage'],
    ['orchestration'],
    ['integration'],
];

const FACADE = `${SRC}[^/]+$`;
const inFolders = (folders) => `${SRC}(${folders.join('|')})/`;

const layerRules = LAYERS.map((layer, i) => {
    const above = LAYERS.slice(i + 1).flat();
    return layer.map((folder) => {
        const siblings = layer.filter((f) => f !== folder);
        const banned = [...above, ...siblings];
        return {
            name: `layer-${folder}`,
            severity: 'error',
            comment:
                `${folder}/ is in layer ${i + 1} of ${LAYERS.length}: it may import ${LAYERS.slice(0, i).flat().join(', ') || 'no other folder'}` +
                ' (and itself), not a higher layer, a folder of its own layer or the façade.',
            from: { path: inFolders([folder]) },
            to: { path: banned.length > 0 ? [inFolders(banned), FACADE] : FACADE },
        };
    });
}).flat();

module.exports = {
    forbidden: [
        {
            name: 'no-circular',
            severity: 'error',
            comment: 'Modules must not depend on each other in a circle, not even through types.',
            from: {},
            to: { circular: true },
        },
        ...layerRules,
        {
            name: 'layer-unplaced-folder',
            severity: 'error',
            comment: 'Every folder of packages/throttling/src must have a place in LAYERS (.dependency-cruiser.cjs).',
            from: { path: `${SRC}[^/]+/`, pathNot: inFolders(LAYERS.flat()) },
            to: {},
        },
    ],
    options: {
        doNotFollow: { path: 'node_modules' },
        exclude: { path: '(^|/)(dist|node_modules)/' },
        tsPreCompilationDeps: true,
        tsConfig: { fileName: 'tsconfig.json' },
    },
};
