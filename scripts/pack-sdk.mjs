// Packs the SDK and the CLI into dist/sdk/ under names that stay the same from one version to the next: the service
// serves them at /sdk/<name>, so a merchant installs the packages of the Tolov they use (src/http/routes/sdk-packages.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DESTINATION = 'dist/sdk';
const SERVED_NAMES = { '@tolov/node': 'tolov-node.tgz', '@tolov/cli': 'tolov-cli.tgz' };

/** `npm pack` of `specs` into `destination`: what npm packed, by package name. */
function pack(specs, destination) {
  // With --json, npm prints the scripts' output on stderr and only the list of packed files on stdout.
  const stdout = execFileSync('npm', ['pack', '--json', '--pack-destination', destination, ...specs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(stdout);
}

/**
 * The packed package, extracted, without its scripts: `prepare` builds dist/ from the sources, which a tarball does
 * not hold, and npm would list it as an install script for the merchant to review.
 */
function withoutScripts(tarball, folder) {
  mkdirSync(folder);
  execFileSync('tar', ['-xzf', tarball, '-C', folder]);
  const manifestPath = join(folder, 'package', 'package.json');
  const { scripts: _scripts, ...manifest } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return join(folder, 'package');
}

const work = mkdtempSync(join(tmpdir(), 'tolov-pack-'));
try {
  // Each workspace's prepare script builds its dist/ first.
  const built = pack(Object.keys(SERVED_NAMES).flatMap((name) => ['--workspace', name]), work);
  const folders = built.map(({ name, filename }) => withoutScripts(join(work, filename), join(work, SERVED_NAMES[name])));
  mkdirSync(DESTINATION, { recursive: true });
  for (const { name, filename } of pack(folders, DESTINATION)) renameSync(join(DESTINATION, filename), join(DESTINATION, SERVED_NAMES[name]));
} finally {
  rmSync(work, { recursive: true, force: true });
}
