// Node's diagnostic report lists the process's environment: a worker that dies in a test (out of memory, where the
// report has no JavaScript stack) names that test in its report (see fatal-reports.ts).
import { beforeEach } from 'vitest';

beforeEach((context) => {
  process.env.TOLOV_RUNNING_TEST = `${context.task.file.name} > ${context.task.name}`;
});
