// Writes the package's README.md (the page npm shows) from the repository's README.md: the same
// text without the contributors' section, with every relative link made absolute on the
// repository's site, since npm resolves none of them. `--check` exits 1 when the file is stale.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const pkg = require('../package.json');

/** `https://github.com/owner/name` from the `repository` field (`git+https://…/name.git`). */
function repositoryWeb() {
    const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository.url;
    return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

function npmReadme(source) {
    const web = repositoryWeb();
    const withoutContributing = source.replace(/\n## Working on it\n[\s\S]*?(?=\n## |\nLicense)/, '\n');
    return withoutContributing.replace(/\]\((?!https?:|#|mailto:)([^)]+)\)/g, (_, target) => {
        const kind = target.endsWith('/') ? 'tree' : 'blob';
        return `](${web}/${kind}/main/${target.replace(/^\.\//, '')})`;
    });
}

const ROOT_README = join(__dirname, '..', '..', '..', 'README.md');
const NPM_README = join(__dirname, '..', 'README.md');

/** The package README the repository's README makes now. */
function wantedReadme() {
    return npmReadme(readFileSync(ROOT_README, 'utf8'));
}

if (require.main === module) {
    if (process.argv.includes('--check')) {
        if (readFileSync(NPM_README, 'utf8') !== wantedReadme()) {
            console.error('packages/throttling/README.md is stale: run `npm run build` and commit it');
            process.exit(1);
        }
    } else {
        writeFileSync(NPM_README, wantedReadme());
    }
}
module.exports = { npmReadme, wantedReadme, NPM_README };
