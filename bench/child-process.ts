// The benchmark's own processes (the service, the bank simulator): started, found at the address they print, stopped.
import type { ChildProcess } from 'node:child_process';

const STARTUP_TIMEOUT_MS = 60_000;

/** The address `child` prints on stdout (the first group of `pattern`), once it does; a child that exits first fails. */
export function addressPrinted(child: ChildProcess, pattern: RegExp, name: string): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), STARTUP_TIMEOUT_MS);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output}`)));
  });
}

/** SIGTERM, then the exit; at once for a child that has already exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
