// Files of an npm package that pages load, served from Tolov's own origin (no page fetches anything from elsewhere):
// only the files named, read once, cached by browsers for an hour.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

const MAX_AGE_SECONDS = 3600;
const TYPES = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

/** Serves `files` (name → path in the package) of `packageName` at `${route}/:name`. */
export function serveLibrary(app: FastifyInstance, route: string, packageName: string, files: Record<string, string>): void {
  const dir = dirname(createRequire(import.meta.url).resolve(`${packageName}/package.json`));
  const read = new Map<string, Buffer>();
  app.get<{ Params: { name: string } }>(`${route}/:name`, { config: { auth: { kind: 'public' } }, schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params;
    const path = Object.hasOwn(files, name) ? files[name] : undefined;
    if (path === undefined) return reply.callNotFound();
    let body = read.get(name);
    if (body === undefined) {
      body = await readFile(join(dir, path));
      read.set(name, body);
    }
    return reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', `public, max-age=${MAX_AGE_SECONDS}`)
      .type(TYPES[name.endsWith('.css') ? 'css' : 'js'])
      .send(body);
  });
}
