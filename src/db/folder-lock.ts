// One process at a time on an embedded data folder. PGlite opens a folder that another process has open without a
// word, and two engines writing the same files corrupt them; PostgreSQL guards its own with postmaster.pid, as this does.
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { randomBase62 } from '../lib/random.js';

const LOCK_FILE = 'tolov.pid';
/** Attempts at taking the lock, each of which finds it free, held, or being taken over from a dead process. */
const ATTEMPTS_MAX = 100;
/** How long an attempt waits for another process that is taking a dead process's lock over (a moment's work). */
const TAKEOVER_WAIT_MS = 10;

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

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

function isRunning(pid: number, file: string): boolean {
  if (pid === process.pid) return held.has(file);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, and belongs to someone else.
    return code(error) === 'EPERM';
  }
}

/**
 * Creates the lock file whole, or nothing if it exists: written under a name of its own first, then linked into place,
 * so that no other process ever reads it half written (and takes an empty lock for a dead one).
 */
async function create(file: string, text: string): Promise<boolean> {
  const draft = `${file}.${process.pid}.${randomBase62(8)}`;
  await writeFile(draft, text, { flag: 'wx' });
  try {
    await link(draft, file);
    return true;
  } catch (error) {
    if (code(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

/** The file's text, or null if it is not there. */
async function read(file: string): Promise<string | null> {
  return readFile(file, 'utf8').catch((error: unknown) => {
    if (code(error) === 'ENOENT') return null;
    throw error;
  });
}

/** The pid a lock file names; a file naming none is not one this code made, and is left to the operator. */
function holderOf(file: string, text: string): number {
  const pid = Number.parseInt(text, 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`The lock ${file} names no process; remove it if no Tolov uses its folder`);
  return pid;
}

/**
 * Takes the folder for this process until the returned function releases it. A lock left by a process that is gone
 * (killed) is taken over; one held by a running process is refused with FolderInUseError.
 *
 * Taking a lock over is done under a second lock (`tolov.pid.takeover`), held for a moment: under it nobody else
 * removes the lock, and nobody makes one while it exists, so a lock read as a dead process's is still that one when
 * it is removed. Only a process killed in that moment leaves the second lock behind; the next to find it moves it
 * aside, and puts it back if it moved a newer one.
 */
export async function lockFolder(folder: string): Promise<() => Promise<void>> {
  await mkdir(folder, { recursive: true });
  const file = resolve(folder, LOCK_FILE);
  const takeover = `${file}.takeover`;
  // The nonce tells this process's lock from an earlier one of the same pid.
  const text = `${process.pid}\n${randomBase62(12)}\n`;
  for (let attempt = 1; attempt <= ATTEMPTS_MAX; attempt++) {
    if (await create(file, text)) {
      held.add(file);
      return async () => {
        held.delete(file);
        await rm(file, { force: true });
      };
    }
    const found = await read(file);
    if (found === null) continue;
    const holder = holderOf(file, found);
    if (isRunning(holder, file)) throw new FolderInUseError(folder, holder);
    if (!(await create(takeover, text))) {
      const taker = await read(takeover);
      if (taker === null) continue;
      if (isRunning(holderOf(takeover, taker), takeover)) await new Promise((done) => setTimeout(done, TAKEOVER_WAIT_MS));
      else await moveAsideIfStill(takeover, taker);
      continue;
    }
    try {
      if ((await read(file)) === found) await rm(file);
    } finally {
      await rm(takeover, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${file}: other processes kept taking it at the same time`);
}

/** Removes a dead process's lock `file` if it still reads `text`; one made meanwhile by another process is put back. */
async function moveAsideIfStill(file: string, text: string): Promise<void> {
  const aside = `${file}.${process.pid}.${randomBase62(8)}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if (code(error) === 'ENOENT') return;
    throw error;
  }
  if ((await readFile(aside, 'utf8')) !== text) await link(aside, file).catch(() => {});
  await rm(aside, { force: true });
}
