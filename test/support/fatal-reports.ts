// A test worker that dies of a fatal error (its heap exhausted, say) never reports its file's end: Node's diagnostic
// report, written as it dies, says where it was. The workers run with these flags; the summary prints what they left.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const DIR = 'test/artifacts/fatal';
/** Frames of a report's JavaScript stack printed. */
const FRAMES_MAX = 20;

/** The workers' flags: a report on a fatal error, in the folder, which starts each run empty. */
export function fatalReportFlags(): string[] {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  return ['--report-on-fatalerror', `--report-directory=${DIR}`];
}

interface Report {
  header?: { event?: string; trigger?: string; processId?: number };
  javascriptStack?: { message?: string; stack?: string[] };
  javascriptHeap?: { usedMemory?: number; totalMemory?: number };
  environmentVariables?: Record<string, string>;
}

/** What each worker that died left: its event, its heap, the test it ran and its JavaScript stack, as lines to print. */
export function fatalReportLines(): string[] {
  let files: string[];
  try {
    files = readdirSync(DIR).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  return files.flatMap((name) => {
    let report: Report;
    try {
      report = JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Report;
    } catch {
      // Cut short as its worker died: named, so the summary line still comes.
      return [`a worker died and left an unreadable report: ${join(DIR, name)}`];
    }
    const used = report.javascriptHeap?.usedMemory;
    // Out of memory, the report has no stack: its message then reads "No stack.", its one frame "Unavailable.".
    const stack = (report.javascriptStack?.stack ?? []).filter((frame) => frame.trim() !== 'Unavailable.');
    return [
      `worker ${report.header?.processId} died: ${report.header?.event} (${report.header?.trigger}), heap ${used === undefined ? '?' : Math.round(used / 2 ** 20)} MB; ${join(DIR, name)}`,
      `  in: ${report.environmentVariables?.TOLOV_RUNNING_TEST ?? 'no test yet'}`,
      ...(stack.length > 0 ? [`  ${report.javascriptStack?.message ?? ''}`] : []),
      ...stack.slice(0, FRAMES_MAX).map((frame) => `  ${frame.trim()}`),
    ];
  });
}
