// The code's shape, checked like its behaviour: dependencies point one way and functions stay short enough to read.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FUNCTION_LINES_MAX = 70;

/**
 * The layers of `src/`, lowest first: a file imports only from its own folder or from a lower layer. The composition
 * root (`service.ts`) builds everything; `main.ts` and the CLI start it.
 */
const LAYERS: string[][] = [
  ['lib'],
  ['config.ts'],
  ['db'],
  ['core'],
  ['rails'],
  ['modules'],
  ['web'],
  ['http', 'workers'],
  ['service.ts'],
  ['main.ts', 'cli'],
];

function sourceFiles(folder: string, extension = '.ts'): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const parse = (file: string) => parseAst(readFileSync(join(ROOT, file), 'utf8'), { lang: file.endsWith('.js') ? 'js' : 'ts' }, file);

/** Project files a file imports or re-exports (relative specifiers only), as paths from the repository root. */
function importsOf(file: string): string[] {
  const specifiers = parse(file).body.map((node) => ('source' in node && node.source ? node.source.value : null));
  return specifiers
    .filter((s): s is string => typeof s === 'string' && s.startsWith('.'))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s.replace(/\.js$/, '.ts'))));
}

/** The top folder (or root file) of `src/` a file belongs to. */
const topOf = (file: string) => relative('src', file).split('/')[0]!;
const layerOf = (file: string) => LAYERS.findIndex((layer) => layer.includes(topOf(file)));

/** Strongly connected groups of more than one node (Tarjan), i.e. the import cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group = stack.splice(stack.indexOf(node));
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Functions (declarations, expressions, arrows, methods) longer than the limit, as "file:line name (n lines)". */
function longFunctions(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const lineAt = (offset: number) => text.slice(0, offset).split('\n').length;
  const long: string[] = [];
  const walk = (node: unknown, name: string) => {
    if (Array.isArray(node)) return node.forEach((child) => walk(child, name));
    if (node === null || typeof node !== 'object') return;
    const n = node as { type?: string; start: number; end: number; id?: { name?: string }; key?: { name?: string } };
    const label = n.key?.name ?? n.id?.name ?? name;
    if (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression') {
      const lines = lineAt(n.end) - lineAt(n.start) + 1;
      if (lines > FUNCTION_LINES_MAX) long.push(`${file}:${lineAt(n.start)} ${label} (${lines} lines)`);
    }
    for (const [field, child] of Object.entries(node)) if (field !== 'parent') walk(child, label);
  };
  walk(parse(file), '(anonymous)');
  return long;
}

const SOURCES = [...sourceFiles('src'), ...sourceFiles('bank-sim')];

describe('the structure of the code', () => {
  it('has no import cycle between files', () => {
    const graph = new Map(SOURCES.map((file) => [file, importsOf(file)]));
    expect(cycles(graph)).toEqual([]);
  });

  it('has no import cycle between the top folders of src/ or between modules', () => {
    const unitOf = (file: string) => (topOf(file) === 'modules' ? relative('src', file).split('/').slice(0, 2).join('/') : topOf(file));
    const graph = new Map<string, string[]>();
    for (const file of SOURCES.filter((f) => f.startsWith('src/'))) {
      const from = unitOf(file);
      const to = importsOf(file).map(unitOf).filter((unit) => unit !== from);
      graph.set(from, [...new Set([...(graph.get(from) ?? []), ...to])]);
    }
    expect(cycles(graph)).toEqual([]);
  });

  it('imports only from the same folder or a lower layer', () => {
    const files = SOURCES.filter((f) => f.startsWith('src/'));
    for (const file of files) expect(layerOf(file), `${file} belongs to no layer`).toBeGreaterThanOrEqual(0);
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => topOf(target) !== topOf(file) && layerOf(target) >= layerOf(file))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("lets a module change another's tables only through that module's service, never by importing its store", () => {
    const moduleOf = (file: string) => (file.startsWith('src/modules/') ? file.split('/')[2]! : null);
    const reaching = SOURCES.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.endsWith('/store.ts') && moduleOf(file) !== null && moduleOf(target) !== null && moduleOf(target) !== moduleOf(file))
        .map((target) => `${file} -> ${target}`),
    );
    expect(reaching).toEqual([]);
  });

  it('keeps the pages to adapters over the commands: nothing under web/ runs the idempotency engine or opens a transaction', () => {
    const web = SOURCES.filter((file) => file.startsWith('src/web/'));
    const engine = web.filter((file) => importsOf(file).includes('src/core/idempotency.ts'));
    const transactions = web.filter((file) => /\.transaction\(/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect({ engine, transactions }).toEqual({ engine: [], transactions: [] });
  });

  it('runs every phase of a capability in a transaction it is given: no module takes a transaction that may be absent', () => {
    const nullable = /\b(?:Transaction|Queryable)\s*\|\s*(?:null|undefined)\b|\btx\?:/;
    expect(SOURCES.filter((file) => file.startsWith('src/modules/') && nullable.test(readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
  });

  it(`has no function longer than ${FUNCTION_LINES_MAX} lines, the hosted pages' and the dashboard's scripts included`, () => {
    expect([...SOURCES, ...sourceFiles('src/web/assets', '.js')].flatMap(longFunctions)).toEqual([]);
  });

  it('keeps out of git what `npm start` writes into the repository: the data folder and its sealing key', () => {
    const ignored = spawnSync('git', ['check-ignore', 'data/', 'data.secrets-key', 'bank-sim-data/'], { cwd: ROOT, encoding: 'utf8' });
    expect(ignored.stdout.trim().split('\n')).toEqual(['data/', 'data.secrets-key', 'bank-sim-data/']);
  });
});
