// The SDK and the CLI as npm tarballs, served by the Tolov they were built with: `npm install <tolov>/sdk/tolov-node.tgz`
// installs the packages of the version that answers. The build packs them into dist/sdk/ (scripts/pack-sdk.mjs); they
// are read once at start. A Tolov started without that build (from its sources, say) has none and says so.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../core/errors.js';

/** Beside the compiled service: dist/sdk/ (from the sources it would be src/sdk/, which is never made). */
const PACKED_DIR = new URL('../../sdk/', import.meta.url);
const SERVED = ['tolov-node.tgz', 'tolov-cli.tgz'] as const;
/** The same address serves the next version after an upgrade, so clients check the ETag each time (npm does). */
const CACHE_CONTROL = 'public, no-cache';

interface Packed {
  body: Buffer;
  etag: string;
}

async function readPacked(name: string): Promise<Packed | null> {
  try {
    const body = await readFile(new URL(name, PACKED_DIR));
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** If-None-Match names this version (or any, `*`): the client's copy is current. */
function isCurrent(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || tag.trim().replace(/^W\//, '') === etag);
}

export const sdkPackageRoutes: FastifyPluginAsync = async (app) => {
  const config = { auth: { kind: 'public' } } as const;
  for (const name of SERVED) {
    const packed = await readPacked(name);
    app.get(`/sdk/${name}`, { config, schema: { hide: true } }, async (request, reply) => {
      if (packed === null) {
        throw new ApiError('NOT_FOUND', `No ${name} here: this Tolov was started without \`npm run build\` (run by \`npm start\`), the step that packs the SDK and the CLI`);
      }
      reply.header('ETag', packed.etag).header('Cache-Control', CACHE_CONTROL).header('X-Content-Type-Options', 'nosniff');
      if (isCurrent(request.headers['if-none-match'], packed.etag)) return reply.code(304).send();
      return reply.type('application/gzip').send(packed.body);
    });
  }
};
