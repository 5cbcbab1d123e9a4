// The deployment files (Dockerfile, .dockerignore, compose.yaml, deploy/), checked where no container engine runs. The
// Dockerfile's stages are followed on the host, step by step, each in an empty folder: the build context as
// .dockerignore leaves it; the build stage's `npm run build` (its full `npm ci` is the repository's own, linked, not
// downloaded again); the runtime stage's own `npm ci --omit=dev …` from the npm registry; then its CMD with its ENV, as
// an unprivileged user who owns only the data folder, until /readyz and the HEALTHCHECK command answer; and the bank
// simulator's stage. Every variable the files set is one the service reads, and each it requires in production is there.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createPostgresDatabase, engine, SECRETS_KEY } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const text = (path: string) => readFileSync(join(ROOT, path), 'utf8');
/** The longest a stop takes, counted from SIGTERM, the drain included (TOLOV_SHUTDOWN_TIMEOUT_MS's default). */
const SHUTDOWN_TIMEOUT_MS = 30_000;
/** What each deployment's env file is made from (the files' own first lines say so). */
const COMPOSE_ENV_EXAMPLE = 'deploy/compose.env.example';
const SYSTEMD_ENV_EXAMPLE = 'deploy/tolov.env.example';

// ---- what the service and the simulator read ----

/** Every variable src/config.ts reads: each goes through one of its readers, by a literal name. */
function configNames(): Set<string> {
  const source = text('src/config.ts');
  const names = new Set([...source.matchAll(/\b(?:read|integer|url|oneOf)\(\s*'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]!));
  // A reader this pattern does not know would leave its names out: every TOLOV_ literal must have been found.
  for (const [, name] of source.matchAll(/'(TOLOV_[A-Z0-9_]+)'/g)) if (!names.has(name!)) throw new Error(`config.ts names ${name} through a reader this test does not know`);
  return names;
}
const bankSimNames = () => new Set([...text('bank-sim/main.ts').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));

type Env = Record<string, string>;

/** NAME=value lines of an env file, commented-out examples (`# NAME=value`) included in `listed`. */
function envFile(path: string): { values: Env; listed: string[] } {
  const values: Env = {};
  const listed: string[] = [];
  for (const line of text(path).split('\n')) {
    const match = /^(#\s*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (!match) continue;
    listed.push(match[2]!);
    if (!match[1]) values[match[2]!] = match[3]!;
  }
  return { values, listed };
}

/** A value of the right form for a setting the operator fills in. */
function sampleValue(name: string): string {
  if (name === 'TOLOV_SMTP_URL') return 'smtps://tolov:password@smtp.example.uz:465';
  if (name === 'DATABASE_URL') return 'postgres://tolov:password@db.example.uz:5432/tolov';
  if (name.endsWith('_URL')) return 'https://gateway.example.uz';
  if (name.endsWith('_KEY')) return randomBytes(32).toString('base64');
  if (name.endsWith('_TOKEN') || name.endsWith('_SECRET')) return randomBytes(24).toString('base64');
  throw new Error(`no sample value for ${name}: teach sampleValue`);
}

/**
 * The settings loadConfig refuses to start without in production, given what a deployment sets (its empty values
 * count as unset, as the service counts them). A value the deployment sets that loadConfig refuses fails here.
 */
function requiredInProduction(set: Env): string[] {
  const env: Env = Object.fromEntries(Object.entries(set).filter(([, value]) => value !== ''));
  const required: string[] = [];
  for (;;) {
    try {
      loadConfig(env);
      return required;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      if (error.variable in env) throw new Error(`the deployment's value of ${error.variable} is refused: ${error.message}`);
      required.push(error.variable);
      env[error.variable] = sampleValue(error.variable);
    }
  }
}

// ---- the Dockerfile ----

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages: continuation lines joined, comments (the syntax line too) dropped. */
function dockerfileStages(): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text('Dockerfile').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && pending === '')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const stages: Stage[] = [];
  for (const line of logical.filter((l) => l !== '')) {
    const [, keyword, args] = /^(\S+)\s+([\s\S]*)$/.exec(line)!;
    if (keyword!.toUpperCase() === 'FROM') {
      const [, base, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args!)!;
      stages.push({ name: name ?? String(stages.length), base: base!, instructions: [] });
    } else stages.at(-1)!.instructions.push({ keyword: keyword!.toUpperCase(), args: args! });
  }
  return stages;
}
const of = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
/** ENV lines as name → value (the KEY=value form, unquoted values). */
function stageEnv(stage: Stage): Env {
  const env: Env = {};
  for (const args of of(stage, 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const [, name, value] = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(pair) ?? [];
      if (name === undefined) throw new Error(`ENV in a form this test does not read: ${args}`);
      env[name] = value!;
    }
  }
  return env;
}
const execForm = (args: string) => JSON.parse(args) as string[];
/** HEALTHCHECK's command, exec form. */
const healthcheck = (stage: Stage) => execForm(/^(?:--\S+\s+)*CMD\s+(.*)$/s.exec(of(stage, 'HEALTHCHECK').at(-1) ?? '')![1]!);
/** A RUN's shell command, without its --mount flags. */
const runCommand = (args: string) => args.replace(/^(--\S+\s+)*/, '');

/** .dockerignore as Docker applies it: the last pattern that matches a path or one of its parents decides. */
function dockerignore(): (path: string) => boolean {
  const regex = (pattern: string) => {
    const cleaned = pattern.replace(/^\/+|\/+$/g, '');
    const body = cleaned
      .split(/(\*\*\/|\/\*\*|\*\*|\*|\?)/)
      .map((part) => ({ '**/': '(?:.*/)?', '/**': '(?:/.*)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
      .join('');
    return new RegExp(`^${body}$`);
  };
  const rules = text('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => ({ negated: line.startsWith('!'), regex: regex(line.replace(/^!/, '')) }));
  return (path) => {
    const parts = path.split('/');
    const paths = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (paths.some((p) => rule.regex.test(p))) excluded = !rule.negated;
    return excluded;
  };
}

// ---- following the stages on this machine ----

/** An environment for npm and the service without the test runner's npm_* variables (npm run sets some). */
const cleanEnv = (): Env => Object.fromEntries(Object.entries(process.env).filter(([name, value]) => !name.startsWith('npm_') && value !== undefined)) as Env;

/** A stage followed in a folder of this machine, which stands for the stage's WORKDIR. */
interface Followed {
  stage: Stage;
  dir: string;
  workdir: string | null;
}

/**
 * The build stage's full `npm ci` with the same lockfile is the repository's own: its packages are linked instead of
 * downloaded again, and its workspace links point at this folder's workspaces, as npm ci would make them.
 */
async function linkDevelopmentInstall(dir: string): Promise<void> {
  const lock = JSON.parse(text('package-lock.json')) as { packages: Record<string, { link?: boolean; resolved?: string }> };
  const links = Object.entries(lock.packages).filter(([, entry]) => entry.link).map(([path, entry]) => [path, entry.resolved!] as const);
  await mkdir(join(dir, 'node_modules'));
  for (const name of await readdir(join(ROOT, 'node_modules'))) {
    if (name === '.package-lock.json') continue;
    const scoped = links.filter(([path]) => path.startsWith(`node_modules/${name}/`));
    if (scoped.length === 0) {
      await symlink(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
      continue;
    }
    await mkdir(join(dir, 'node_modules', name));
    for (const inner of await readdir(join(ROOT, 'node_modules', name))) {
      const link = scoped.find(([path]) => path === `node_modules/${name}/${inner}`);
      await symlink(link ? join(dir, link[1]) : join(ROOT, 'node_modules', name, inner), join(dir, 'node_modules', name, inner));
    }
  }
}

/** Follows `stage` in `dir`; a stage built on another stage continues in that stage's folder (it only adds files). */
async function follow(stage: Stage, dir: string, followed: Map<string, Followed>): Promise<Followed> {
  const parent = followed.get(stage.base);
  const self: Followed = { stage, dir: parent?.dir ?? dir, workdir: parent?.workdir ?? null };
  await mkdir(self.dir, { recursive: true });
  const ignored = dockerignore();
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') {
      if (self.workdir !== null && self.workdir !== args) throw new Error(`a second WORKDIR (${args}): this test cannot follow it`);
      self.workdir = args;
    }
    if (keyword === 'COPY') await copy(args, self, followed, ignored);
    if (keyword === 'RUN') await runStep(runCommand(args), self.dir);
  }
  followed.set(stage.name, self);
  return self;
}

/** The folder of `path` in a followed stage: paths under its WORKDIR only. */
function inside(path: string, from: Followed): string {
  if (from.workdir === null) throw new Error(`${path} before any WORKDIR: this test cannot follow it`);
  const absolute = path.startsWith('/') ? path : join(from.workdir, path);
  if (absolute !== from.workdir && !absolute.startsWith(`${from.workdir}/`)) throw new Error(`${path} is outside WORKDIR ${from.workdir}: this test cannot follow it`);
  return join(from.dir, relative(from.workdir, absolute));
}

async function copy(args: string, to: Followed, followed: Map<string, Followed>, ignored: (path: string) => boolean): Promise<void> {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const [dest, ...sources] = words.filter((w) => !w.startsWith('--')).reverse();
  const target = inside(dest!, to);
  for (const source of sources.reverse()) {
    const path = from === undefined ? join(ROOT, source) : inside(source, followed.get(from)!);
    if (from === undefined) expect(ignored(source), `${source} is copied but .dockerignore leaves it out of the context`).toBe(false);
    expect(existsSync(path), `COPY ${source}: not found`).toBe(true);
    const destination = dest!.endsWith('/') ? join(target, basename(source)) : target;
    await cp(path, destination, { recursive: true, filter: (file) => from !== undefined || !ignored(relative(ROOT, file)) || file === path });
  }
}

async function runStep(command: string, dir: string): Promise<void> {
  for (const part of command.split('&&').map((p) => p.trim())) {
    if (/^npm ci\b/.test(part) && !part.includes('--omit=dev')) await linkDevelopmentInstall(dir);
    else if (/^npm (ci|run) /.test(part)) await run('sh', ['-c', part], { cwd: dir, env: cleanEnv(), timeout: 120_000 });
    // The state folder, outside WORKDIR: the test makes one of its own, owned by the user the service runs as.
    else if (!/^(mkdir -p|chown node:node) \/var\/lib\/[a-z-]+$/.test(part)) throw new Error(`a RUN step this test does not know how to follow: ${part}`);
  }
}

/** Installed packages, as the lockfile names them (node_modules/a, node_modules/@s/b, node_modules/a/node_modules/c). */
async function installed(dir: string, prefix = 'node_modules'): Promise<string[]> {
  if (!existsSync(join(dir, prefix))) return [];
  const found: string[] = [];
  for (const name of await readdir(join(dir, prefix))) {
    if (name.startsWith('.')) continue;
    const names = name.startsWith('@') ? (await readdir(join(dir, prefix, name))).map((inner) => `${name}/${inner}`) : [name];
    for (const pkg of names) {
      const path = `${prefix}/${pkg}`;
      if (existsSync(join(dir, path, 'package.json'))) found.push(path, ...(await installed(dir, `${path}/node_modules`)));
    }
  }
  return found;
}

/** Starts an exec-form CMD and waits for the line `listening on <url>` it prints. */
function start(command: string[], cwd: string, env: Env, user: { uid?: number; gid?: number }): Promise<{ child: ChildProcess; url: string; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], ...user });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command.join(' ')}: no URL within 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => output, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${command.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

// ---- the tests ----

describe('the Dockerfile, followed on this machine', () => {
  const stages = dockerfileStages();
  const runtime = stages.at(-1)!;
  let work: string;
  const followed = new Map<string, Followed>();
  const children: ChildProcess[] = [];
  const drops: Array<() => Promise<void>> = [];
  // As root (CI), the service runs as `nobody`, as the image runs it as `node`: it may write its data folder alone.
  const user = process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : {};

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tolov-deployment-'));
    await chmod(work, 0o755);
    // The runtime stage and each stage it copies from, in the Dockerfile's order.
    const needed = new Set(of(runtime, 'COPY').flatMap((args) => /--from=(\S+)/.exec(args)?.[1] ?? []));
    for (const stage of stages.filter((s) => needed.has(s.name) || s.name === 'bank-sim' || s === runtime)) await follow(stage, join(work, stage.name), followed);
  }, 240_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(drops.map((drop) => drop()));
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('installs the production dependencies of the lockfile and nothing else', async () => {
    const { dir } = followed.get(runtime.name)!;
    const lock = JSON.parse(text('package-lock.json')) as { packages: Record<string, { dev?: boolean; optional?: boolean; link?: boolean }> };
    const pkg = JSON.parse(text('package.json')) as { devDependencies: Record<string, string> };
    const paths = await installed(dir);
    expect(paths.filter((path) => lock.packages[path] === undefined || lock.packages[path]!.dev)).toEqual([]);
    const production = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && !entry.dev && !entry.optional && !entry.link).map(([path]) => path);
    expect(production.filter((path) => !paths.includes(path))).toEqual([]);
    // A development dependency that a production one needs as well (yaml, of @fastify/swagger) is rightly there.
    const devOnly = Object.keys(pkg.devDependencies).filter((name) => lock.packages[`node_modules/${name}`]?.dev);
    expect(devOnly).toEqual(expect.arrayContaining(['vitest', 'typescript', 'tsx']));
    for (const name of devOnly) expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
    // No workspace links: the service does not import the SDK or the CLI, whose tarballs it serves from dist/sdk/.
    expect(existsSync(join(dir, 'node_modules/@tolov'))).toBe(false);
    expect(existsSync(join(dir, 'dist/main.js')) && existsSync(join(dir, 'dist/sdk/tolov-node.tgz'))).toBe(true);
  }, 30_000);

  it('starts its CMD with its ENV as an unprivileged user, ready on /readyz, and its HEALTHCHECK says so', async () => {
    const { dir } = followed.get(runtime.name)!;
    const state = join(work, 'var-lib-tolov');
    await mkdir(state);
    if (user.uid !== undefined) await chown(state, user.uid, user.gid!);
    let storage: Env = { TOLOV_DATA_DIR: join(state, 'data') };
    if (engine === 'postgres') {
      const database = await createPostgresDatabase();
      drops.push(database.drop);
      storage = { DATABASE_URL: database.url, TOLOV_SECRETS_KEY: SECRETS_KEY };
    }
    // The image's ENV, with a port of the test's and loopback; production needs a mail server (no mail is sent here).
    const env: Env = { PATH: process.env.PATH!, ...stageEnv(runtime), PORT: '0', HOST: '127.0.0.1', TOLOV_SMTP_URL: 'smtp://127.0.0.1:2525', ...storage };
    expect(env.NODE_ENV).toBe('production');
    const service = await start(execForm(of(runtime, 'CMD').at(-1)!), dir, env, user);
    children.push(service.child);
    await waitFor(async () => ((await fetch(`${service.url}/readyz`)).status === 200 ? true : null), 30_000, '/readyz 200');
    // It wrote where the image lets it, as its user: the data folder (and the sealing key beside it) is that user's.
    if (engine === 'pglite' && user.uid !== undefined) expect((await stat(join(state, 'data'))).uid).toBe(user.uid);
    const port = new URL(service.url).port;
    const [command, ...args] = healthcheck(runtime);
    await expect(run(command!, args, { cwd: dir, env: { ...env, PORT: port }, ...user, timeout: 10_000 })).resolves.toBeDefined();
    // SIGTERM (STOPSIGNAL) reaches the service itself: it stops cleanly, and the health check then fails.
    expect(of(runtime, 'STOPSIGNAL').at(-1) ?? 'SIGTERM').toBe('SIGTERM');
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    await expect(run(command!, args, { cwd: dir, env: { ...env, PORT: port }, ...user, timeout: 10_000 })).rejects.toMatchObject({ code: 1 });
    expect(service.output()).not.toMatch(/EACCES|EPERM/);
  }, 120_000);

  it('starts the bank simulator from its stage (compose.yaml’s bank-sim profile)', async () => {
    const bankSim = stages.find((stage) => stage.name === 'bank-sim')!;
    const { dir } = followed.get(bankSim.name)!;
    const state = join(work, 'var-lib-bank-sim');
    await mkdir(state);
    if (user.uid !== undefined) await chown(state, user.uid, user.gid!);
    const env: Env = { PATH: process.env.PATH!, ...stageEnv(bankSim), BANK_SIM_PORT: '0', BANK_SIM_DATA_DIR: join(state, 'data'), BANK_SIM_SECRET: randomBytes(24).toString('base64') };
    const sim = await start(execForm(of(bankSim, 'CMD').at(-1)!), dir, env, user);
    children.push(sim.child);
    expect((await fetch(`${sim.url}/sim/v1/operations?limit=1`)).status).toBe(200);
    sim.child.kill('SIGTERM');
    expect(await sim.exited).toBe(0);
  }, 120_000);
});

describe('the Dockerfile’s shape', () => {
  const stages = dockerfileStages();
  const runtime = stages.at(-1)!;

  it('builds in one stage and runs another: pinned Node images, production dependencies only, a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages.filter((s) => !stages.some((other) => other.name === s.base))) expect(stage.base).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
    expect(of(runtime, 'RUN').map(runCommand).some((run) => /^npm ci\b.*--omit=dev/.test(run))).toBe(true);
    expect(of(runtime, 'COPY').some((args) => args.includes('--from='))).toBe(true);
    const user = of(runtime, 'USER').at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    // node itself is PID 1's command (not npm, which would stand between the stop signal and the service).
    expect(execForm(of(runtime, 'CMD').at(-1)!)).toEqual(['node', 'dist/main.js']);
  });

  it('checks health on /readyz with Node alone (the slim image has no curl)', () => {
    const command = healthcheck(runtime);
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain('/readyz');
  });

  it('sets only variables the service reads', () => {
    const names = configNames();
    expect(Object.keys(stageEnv(runtime)).filter((name) => !names.has(name))).toEqual([]);
    const bankSim = stages.find((stage) => stage.name === 'bank-sim')!;
    expect(Object.keys(stageEnv(bankSim)).filter((name) => !bankSimNames().has(name))).toEqual([]);
  });
});

describe('compose.yaml', () => {
  const compose = parseYaml(text('compose.yaml')) as { services: Record<string, any>; volumes: Record<string, unknown> };
  const { postgres, tolov, 'bank-sim': bankSim } = compose.services;
  const envKeys = (service: any): string[] => (Array.isArray(service.environment) ? service.environment.map((e: string) => e.split('=')[0]) : Object.keys(service.environment ?? {}));
  const interpolated = new Set([...text('compose.yaml').matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!));
  const example = envFile(COMPOSE_ENV_EXAMPLE);
  const stages = dockerfileStages();

  it('runs PostgreSQL with its data on a named volume and a health check that Tolov waits for', () => {
    expect(postgres.image).toMatch(/^postgres:\d+/);
    const [volume, path] = String(postgres.volumes[0]).split(':');
    expect(path).toBe('/var/lib/postgresql/data');
    expect(compose.volumes).toHaveProperty(volume!);
    expect(postgres.healthcheck.test.join(' ')).toContain('pg_isready');
    expect(tolov.depends_on.postgres.condition).toBe('service_healthy');
    expect(tolov.build.target).toBe(stages.at(-1)!.name);
    expect(envKeys(postgres).every((name) => name.startsWith('POSTGRES_'))).toBe(true);
  });

  it('takes every secret from the env file, none written in it', () => {
    expect(tolov.env_file).toEqual(['.env']);
    expect(text('compose.yaml')).toContain(`cp ${COMPOSE_ENV_EXAMPLE} .env`);
    for (const service of [postgres, tolov, bankSim]) {
      for (const [name, value] of Object.entries(service.environment ?? {})) {
        if (/PASSWORD|SECRET|TOKEN|KEY/.test(name)) expect(String(value), name).toMatch(/^\$\{[A-Z_]+(:[-?][^}]*)?\}$/);
      }
    }
    expect(tolov.environment.DATABASE_URL).toMatch(/^postgres:\/\/tolov:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/tolov$/);
    // Every ${…} comes from .env.
    expect([...interpolated].filter((name) => !example.listed.includes(name))).toEqual([]);
  });

  it('gives Tolov only variables it reads, and each it requires in production', () => {
    const names = configNames();
    // .env also holds what compose itself interpolates (the PostgreSQL password).
    expect(example.listed.filter((name) => !names.has(name) && !interpolated.has(name))).toEqual([]);
    expect(envKeys(tolov).filter((name) => !names.has(name))).toEqual([]);
    const runtimeEnv = stageEnv(stages.at(-1)!);
    const set = { ...runtimeEnv, ...example.values, DATABASE_URL: sampleValue('DATABASE_URL') };
    expect(requiredInProduction(set).filter((name) => !example.listed.includes(name))).toEqual([]);
    // With DATABASE_URL the service also requires the sealing key (src/service.ts).
    expect(example.listed).toContain('TOLOV_SECRETS_KEY');
  });

  it('gives a stop the time to drain and finish', () => {
    expect(seconds(tolov.stop_grace_period) * 1000).toBeGreaterThan(Number(example.values.TOLOV_SHUTDOWN_TIMEOUT_MS ?? SHUTDOWN_TIMEOUT_MS));
  });

  it('has the bank simulator as an optional profile, from its own Dockerfile stage', () => {
    expect(bankSim.profiles).toEqual(['bank-sim']);
    expect(stages.map((stage) => stage.name)).toContain(bankSim.build.target);
    expect(envKeys(bankSim).filter((name) => !bankSimNames().has(name))).toEqual([]);
    expect(envKeys(bankSim)).toContain('BANK_SIM_SECRET');
    for (const service of [postgres, tolov]) expect(service.profiles).toBeUndefined();
  });
});

/** A systemd or compose duration (`90s`, `1m30s`, `90`) in seconds. */
function seconds(duration: string | number): number {
  if (typeof duration === 'number' || /^\d+$/.test(duration)) return Number(duration);
  const units: Record<string, number> = { h: 3600, min: 60, m: 60, s: 1 };
  let total = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+)\s*(h|min|m|s)/g)) total += Number(amount) * units[unit!]!;
  return total;
}

describe('deploy/tolov.service', () => {
  const lines = text('deploy/tolov.service').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  const settings = (key: string) => lines.filter((line) => line.startsWith(`${key}=`)).map((line) => line.slice(key.length + 1));
  const setting = (key: string) => settings(key).at(-1);
  const unitEnv: Env = Object.fromEntries(settings('Environment').map((pair) => pair.split(/=(.*)/s).slice(0, 2) as [string, string]));
  const example = envFile(SYSTEMD_ENV_EXAMPLE);

  it('runs node dist/main.js as its own user, restarted on failure, stopped by SIGTERM with time to drain', () => {
    expect(setting('Type')).toMatch(/^(simple|exec)$/);
    expect(setting('User')).toBe('tolov');
    expect(setting('ExecStart')).toMatch(/^\/\S*node \/opt\/tolov\/dist\/main\.js$/);
    expect(setting('WorkingDirectory')).toBe('/opt/tolov');
    expect(setting('Restart')).toBe('on-failure');
    expect(setting('KillSignal')).toBe('SIGTERM');
    expect(seconds(setting('TimeoutStopSec')!) * 1000).toBeGreaterThan(Number(example.values.TOLOV_SHUTDOWN_TIMEOUT_MS ?? SHUTDOWN_TIMEOUT_MS));
  });

  it('is sandboxed, with V8 left free to compile', () => {
    const sandbox = { NoNewPrivileges: 'yes', ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes', PrivateDevices: 'yes', CapabilityBoundingSet: '' };
    for (const [key, value] of Object.entries({ ...sandbox, RestrictNamespaces: 'yes', RestrictSUIDSGID: 'yes', LockPersonality: 'yes' })) expect(setting(key), key).toBe(value);
    expect(setting('RestrictAddressFamilies')?.split(' ').sort()).toEqual(['AF_INET', 'AF_INET6', 'AF_UNIX']);
    expect(settings('SystemCallFilter')).toContain('@system-service');
    expect(setting('MemoryDenyWriteExecute')).toBeUndefined();
    // The embedded database's folder is writable under ProtectSystem=strict: in the state directory, or listed.
    const writable = [...settings('StateDirectory').map((name) => `/var/lib/${name}`), ...settings('ReadWritePaths')];
    expect(writable.some((path) => unitEnv.TOLOV_DATA_DIR!.startsWith(`${path}/`))).toBe(true);
  });

  it('sets only variables the service reads, and its env file lists each it requires in production', () => {
    const names = configNames();
    expect(setting('EnvironmentFile')).toBe('/etc/tolov/tolov.env');
    expect(text(SYSTEMD_ENV_EXAMPLE)).toContain('/etc/tolov/tolov.env');
    expect(Object.keys(unitEnv).filter((name) => !names.has(name))).toEqual([]);
    expect(example.listed.filter((name) => !names.has(name))).toEqual([]);
    expect(unitEnv.NODE_ENV).toBe('production');
    expect(requiredInProduction({ ...unitEnv, ...example.values }).filter((name) => !example.listed.includes(name))).toEqual([]);
    if (example.listed.includes('DATABASE_URL')) expect(example.listed).toContain('TOLOV_SECRETS_KEY');
  });
});
