import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { pgliteDb } from '../../src/db/db.js';
import { createPglite } from '../../src/db/pglite/engine.js';
import { migrate } from '../../src/db/migrate.js';

// initdb takes seconds; every test file starts from a copy of one migrated database instead.
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'tolov-pglite-'));
  const lite = await createPglite('memory://');
  await migrate(await pgliteDb(lite));
  const path = join(dir, 'template.tar.gz');
  await writeFile(path, Buffer.from(await (await lite.dumpDataDir()).arrayBuffer()));
  await lite.close();
  project.provide('pgliteTemplatePath', path);
  return () => rm(dir, { recursive: true, force: true });
}
