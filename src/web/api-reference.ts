// The API reference at /docs/api: Swagger UI (swagger-ui-dist, served from this origin, nothing fetched elsewhere)
// rendering GET /openapi.json. Read-only: "Try it out" is off, so a secret key is never typed into a web page.
import type { FastifyPluginAsync } from 'fastify';
import { pageHeaders } from './headers.js';
import { serveLibrary } from './library.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tolov API reference</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/api/library/swagger-ui.css">
<link rel="stylesheet" href="/assets/theme.css">
<link rel="stylesheet" href="/assets/api-reference.css">
<script src="/docs/api/library/swagger-ui-bundle.js" defer></script>
<script src="/assets/api-reference.js" defer></script>
</head>
<body>
<header class="reference-top">
  <a class="brand" href="/docs/api">Tolov</a>
  <span>API reference</span>
  <a href="/openapi.json">openapi.json</a>
</header>
<main id="reference"><p class="reference-loading">Loading the API reference…</p></main>
<noscript><p>The reference needs JavaScript; the description itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
</body>
</html>
`;

export const apiReferenceRoutes: FastifyPluginAsync = async (app) => {
  const config = { auth: { kind: 'public' } } as const;
  app.get('/docs/api', { config, schema: { hide: true } }, async (_request, reply) =>
    pageHeaders(reply, { formAction: "'none'", referrer: 'same-origin', dataImages: true }).type('text/html; charset=utf-8').send(PAGE),
  );

  serveLibrary(app, '/docs/api/library', 'swagger-ui-dist', { 'swagger-ui.css': 'swagger-ui.css', 'swagger-ui-bundle.js': 'swagger-ui-bundle.js' });
};
