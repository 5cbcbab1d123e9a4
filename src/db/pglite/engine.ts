import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';

/** Opens the embedded engine's database: a folder, or `memory://`, optionally starting from a dumped data dir. */
export async function createPglite(dataDir: string, loadDataDir?: Blob): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
  return PGlite.create(dataDir, loadDataDir ? { loadDataDir } : {});
}
