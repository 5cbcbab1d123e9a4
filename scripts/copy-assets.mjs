// Copies the files the compiled service reads at run time (SQL migrations, page assets) from src/ to dist/.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ASSET = /\.(sql|html|css|js|svg|png|woff2|json)$/;

function copy(from, to) {
  for (const name of readdirSync(from)) {
    const source = join(from, name);
    if (statSync(source).isDirectory()) copy(source, join(to, name));
    else if (ASSET.test(name) && !name.endsWith('.d.ts')) cpSync(source, join(to, name));
  }
}

copy('src', 'dist');
