#!/usr/bin/env bash
# Runs the end-to-end smoke tests against the lowest Crawlee of the peer range (>=3.15 <4) as well as
# the installed one, without changing this checkout's node_modules: the repository is copied to a
# temporary folder, installed from the lock file there, and Crawlee's packages are replaced there by
# the lowest version (`npm install --no-save`). Usage: .ci/crawlee-compat.sh [version ...]
# (default: 3.15.3, the latest 3.15.x on the registry, then the installed version in place).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

# The smoke: a basic crawler, the crawler integration (hooks, robots.txt, statistics), and a restart.
SMOKE=(
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
  cd "$work"
  npm ci --no-audit --no-fund --loglevel=error
  specs=("crawlee@${version}")
  for name in "${PACKAGES[@]}"; do specs+=("@crawlee/${name}@${version}"); done
  npm install --no-save --no-audit --no-fund --loglevel=error "${specs[@]}"
  installed=$(node -p "require('@crawlee/core/package.json').version")
  if [ "$installed" != "$version" ]; then
    echo "expected @crawlee/core ${version}, found ${installed}" >&2
    exit 1
  fi
  # One copy of @crawlee/core only: a second would make Crawlee's instanceof checks fail.
  copies=$(find node_modules -path '*/@crawlee/core/package.json' | wc -l)
  if [ "$copies" -ne 1 ]; then
    echo "found ${copies} copies of @crawlee/core:" >&2
    find node_modules -path '*/@crawlee/core/package.json' >&2
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
