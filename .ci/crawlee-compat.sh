#!/usr/bin/env bash
# Runs the end-to-end smoke tests against the lowest Crawlee of the peer range (>=3.15 <4) as well as
# the installed one, without changing this checkout's node_modules: the repository is copied to a
# temporary folder with this checkout's installed packages, and Crawlee's packages are replaced there
# by the lowest version (every package.json of the copy set to it, then `npm install --no-save`). Usage: .ci/crawlee-compat.sh [version ...]
# (default: 3.15.3, the latest 3.15.x on the registry, then the installed version in place).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

# The smoke: a basic crawler, the crawler integration (hooks, robots.txt, statistics), a restart, and
# Crawlee's RequestQueue on RedisStorageClient (the locking API it relies on differs across versions).
SMOKE=(
  test/unit/redis-storage-request-queue.test.ts
  test/e2e/basic-crawler.test.ts
  test/e2e/integration-basic-crawler.test.ts
  test/e2e/robots-not-refusals.test.ts
  test/e2e/persistence-restart.test.ts
)
# Every Crawlee package the repository installs, replaced together so only one Crawlee is loaded.
PACKAGES=(basic browser browser-pool cheerio core http jsdom linkedom memory-storage playwright puppeteer types utils)
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(3.15.3)

run_smoke() {
  NODE_OPTIONS=--experimental-vm-modules npx jest --ci "${SMOKE[@]}"
}

for version in "${VERSIONS[@]}"; do
  work=$(mktemp -d "${TMPDIR:-/tmp}/crawlee-compat-${version}-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "== Crawlee ${version}: copying the repository to ${work}"
  # Tracked and new files, not node_modules, dist or storage left by earlier runs.
  (cd "$REPO" && git ls-files -co --exclude-standard -z) | (cd "$REPO" && xargs -0 cp --parents -t "$work")
  # This checkout's installed tree is the starting point (as `npm ci` would leave it, minus the download).
  cp -a "$REPO/node_modules" "$work/"
  for folder in "$REPO"/packages/*/node_modules; do
    [ -d "$folder" ] && cp -a "$folder" "$work/packages/$(basename "$(dirname "$folder")")/"
  done
  cd "$work"
  # Every package.json of the copy asks for this version (the workspaces pin 3.18.1 too; left alone,
  # npm would install a second Crawlee beside each of them).
  node -e '
    const fs = require("fs");
    const [version, ...files] = process.argv.slice(1);
    for (const file of files) {
      const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
      for (const field of ["dependencies", "devDependencies", "peerDependencies"])
        for (const name of Object.keys(pkg[field] ?? {}))
          if (name === "crawlee" || name.startsWith("@crawlee/")) pkg[field][name] = field === "peerDependencies" ? pkg[field][name] : version;
      fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
    }' "$version" package.json packages/*/package.json
  specs=("crawlee@${version}")
  for name in "${PACKAGES[@]}"; do specs+=("@crawlee/${name}@${version}"); done
  npm install --no-save --no-audit --no-fund --loglevel=error "${specs[@]}"
  installed=$(node -p "require('@crawlee/core/package.json').version")
  if [ "$installed" != "$version" ]; then
    echo "expected @crawlee/core ${version}, found ${installed}" >&2
    exit 1
  fi
  # One copy of @crawlee/core only: a second would make Crawlee's instanceof checks fail.
  copies=$(find . -path '*/node_modules/@crawlee/core/package.json' | wc -l)
  if [ "$copies" -ne 1 ]; then
    echo "found ${copies} copies of @crawlee/core:" >&2
    find . -path '*/node_modules/@crawlee/core/package.json' >&2
    exit 1
  fi
  npm run build --silent
  echo "== Crawlee ${version}: e2e smoke"
  run_smoke
  cd "$REPO"
  rm -rf "$work"
  trap - EXIT
done

echo "== Crawlee $(node -p "require('@crawlee/core/package.json').version") (installed): e2e smoke"
npm run build --silent
run_smoke
