// Records the API reference's examples from a run of the API on an in-memory database, and writes them to
// src/http/openapi-examples.json: `node --import tsx scripts/record-api-examples.ts`, then `npm run sdk:types`.
// test/platform/api-examples.test.ts fails when the committed examples no longer match what the API answers.
import { writeFile } from 'node:fs/promises';
import { loadConfig } from '../src/config.js';
import { EXAMPLES_FILE } from '../src/http/openapi.js';
import { createService } from '../src/service.js';
import { RECORDING_ENV, recordApiExamples } from './api-examples/record.js';
import { Mailbox } from '../test/support/mailbox.js';

const ADMIN_TOKEN = 'recording-operator-token-0123456789';
const mailbox = await Mailbox.start();
const config = loadConfig({
  TOLOV_SMTP_URL: mailbox.url,
  ...RECORDING_ENV,
  TOLOV_DATA_DIR: 'memory://',
  TOLOV_ADMIN_TOKEN: ADMIN_TOKEN,
  TOLOV_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  LOG_LEVEL: 'silent',
});
const service = await createService(config);
await service.app.ready();
try {
  const examples = await recordApiExamples({ ...service, mailbox, adminToken: ADMIN_TOKEN });
  await writeFile(EXAMPLES_FILE, `${JSON.stringify(examples, null, 2)}\n`);
} finally {
  await service.stop();
  await mailbox.stop();
}
