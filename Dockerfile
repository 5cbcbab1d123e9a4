# syntax=docker/dockerfile:1
# Tolov's image: `docker build -t tolov .` builds the last stage (runtime). The bank simulator, a test tool, is the
# `bank-sim` target of the same file (compose.yaml's optional profile). test/platform/deployment.test.ts follows the
# build and runtime stages' steps on the host, without a container engine (see docs/operations.md, Deployment).

# ---- build: every dependency, the compiled service, its assets and the SDK/CLI tarballs it serves (dist/) ----
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
# The manifests first, in a layer of their own: a change of the sources does not download the dependencies again.
# The workspaces' manifests let npm link @tolov/node and @tolov/cli, which the build packs into dist/sdk/.
COPY package.json package-lock.json ./
COPY packages/node/package.json packages/node/
COPY packages/cli/package.json packages/cli/
# No install scripts: the workspaces' `prepare` needs their sources (the build runs it when it packs them), and no
# dependency needs one to work.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY packages ./packages
COPY src ./src
RUN npm run build

# ---- bank-sim: the bank and fiscal gateway simulator (`npm run bank-sim`), run from its TypeScript sources ----
# It needs tsx, a development dependency, so it is built on the build stage and never part of the runtime image.
FROM build AS bank-sim
COPY bank-sim ./bank-sim
RUN mkdir -p /var/lib/bank-sim && chown node:node /var/lib/bank-sim
ENV BANK_SIM_PORT=4100 BANK_SIM_DATA_DIR=/var/lib/bank-sim/data
USER node
EXPOSE 4100
CMD ["node", "--import", "tsx", "bank-sim/main.ts"]

# ---- runtime: production dependencies and dist/ only, as the unprivileged `node` user ----
FROM node:20.20.2-bookworm-slim AS runtime
WORKDIR /app
# Production dependencies from the lockfile, nothing else: no devDependencies (--omit=dev), no workspaces (the service
# does not import them; their tarballs are in dist/sdk/), and no install scripts (none is needed at run time; the only
# one among them, @scarf/scarf's, reports the installation to a third party).
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
# The embedded database's folder (and its sealing key beside it) when DATABASE_URL is unset: mount a volume here.
RUN mkdir -p /var/lib/tolov && chown node:node /var/lib/tolov
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 TOLOV_DATA_DIR=/var/lib/tolov/data
USER node
EXPOSE 4000
# Ready: the database answers, migrations are applied and the workers run. The slim image has no curl: Node's fetch.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) reaches node itself, which drains and stops within TOLOV_SHUTDOWN_TIMEOUT_MS; give it longer:
# `docker stop --time`, compose's stop_grace_period.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
