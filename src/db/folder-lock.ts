// One process at a time on an embedded data folder. PGlite opens a folder that another process has open without a
// word, and two engines writing the same files corrupt them; PostgreSQL guards its own with postmaster.pid, as this does.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

const LOCK_FILE = 'tolov.pid';
/** Attempts at taking a lock whose holder is gone, in case another process takes it over at the same moment. */
const TAKEOVER_ATTEMPTS_MAX = 3;

export class FolderInUseError extends Error {
  constructor(
    readonly folder: string,
    readonly pid: number,
  ) {
    super(`The embedded database in ${folder} is in use by process ${pid}; only one process may open it at a time`);
    this.name = 'FolderInUseError';
  }
}

/**
 * Lock files this process holds. A lock naming this process's pid that is not among them was left by an earlier
 * process that had the same pid (in a container, every start is pid 1).
 */
const held = new Set<string>();

function isRunning(pid: number, file: string): boolean {
  if (pid === process.pid) return held.has(file);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, and belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the folder for this process until the returned function releases it. A lock left by a process that is gone
 * (killed) is taken over; one held by a running process is refused with FolderInUseError.
 */
export async function lockFolder(folder: string): Promise<() => Promise<void>> {
  await mkdir(folder, { recursive: true });
  const file = resolve(folder, LOCK_FILE);
  for (let attempt = 1; ; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      held.add(file);
      return async () => {
        held.delete(file);
        await rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(file, 'utf8').catch(() => '');
    const holder = Number.parseInt(text, 10);
    if (Number.isSafeInteger(holder) && holder > 0 && isRunning(holder, file)) throw new FolderInUseError(folder, holder);
    if (attempt >= TAKEOVER_ATTEMPTS_MAX) throw new Error(`Could not take the lock ${file} over from a process that is gone`);
    // Gone: remove its lock, unless another process has just taken it over, and try again; of two processes taking it
    // over at once, only one creates it.
    if ((await readFile(file, 'utf8').catch(() => '')) === text) await rm(file, { force: true });
  }
}
