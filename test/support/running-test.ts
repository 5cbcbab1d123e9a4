// Node's diagnostic report lists the process's environment: a worker that dies in a test (out of memory, where the
// report has no JavaScript stack) names that test in its report (see fatal-reports.ts).
import { beforeAll, beforeEach } from 'vitest';

// This runs as each file starts (in a worker that ran others before): a death while it is collected names no test.
delete process.env.TOLOV_RUNNING_TEST;

beforeAll(({}, file) => {
  process.env.TOLOV_RUNNING_TEST = `${file.file.name} > its hooks before its tests`;
});

beforeEach((context) => {
  process.env.TOLOV_RUNNING_TEST = `${context.task.file.name} > ${context.task.name}`;
});
