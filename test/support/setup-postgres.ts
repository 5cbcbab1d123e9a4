import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { randomBase62 } from '../../src/lib/random.js';

// Each run gets a fresh database of its own name on the server, dropped at the end.
export default async function setup(project: TestProject) {
  const serverUrl = process.env.TOLOV_TEST_DATABASE_URL!;
  const name = `tolov_test_${randomBase62(10).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString());
  await migrate(db);
  await db.close();
  project.provide('postgresUrl', url.toString());

  return async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    // The test databases copied from this one are normally dropped by their tests; any a crashed test left go too.
    const copies = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${name}\\_%`]);
    for (const { datname } of copies.rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
}
