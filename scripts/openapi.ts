// Prints the API's OpenAPI description as merchants see it (no operator API), without the server address: the source
// of the Node SDK's types (npm run sdk:types).
import { loadConfig } from '../src/config.js';
import { createService } from '../src/service.js';

const service = await createService(loadConfig({ TOLOV_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', TOLOV_CHECKOUT_URL: 'https://api.tolov.example' }));
await service.app.ready();
const served = await service.app.inject({ method: 'GET', url: '/openapi.json' });
const { servers: _servers, ...document } = served.json() as Record<string, unknown>;
process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
await service.stop();
