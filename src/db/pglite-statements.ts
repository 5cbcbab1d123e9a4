// Named prepared statements on PGlite's one session. `PGlite.query` sends every statement as the unnamed one (parse,
// describe, bind, describe, execute, sync: six calls into the engine), so PostgreSQL parses, analyses and plans it
// again each time; the money path's statements are large, and that was most of their cost. Here a statement is parsed
// and described once per session, then each run is one call: bind, describe, execute, sync. PostgreSQL keeps the
// parsed statement and, once it proves no worse, a generic plan (the same as node-postgres gets on the other engine).
import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import { setNewest } from '../lib/bounded-map.js';

interface Prepared {
  name: string;
  /** Type of each parameter as PostgreSQL resolved it, which picks the serializer. */
  parameterTypes: number[];
}

const { serialize } = protocol;
/** With the u flag a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Surrogate}/gu;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Runs one statement with named preparation. The caller holds PGlite's query lock (and, outside a transaction, its
 * transaction lock), as `PGlite.query` does internally; `durable` writes the data folder afterwards, as a statement
 * outside a transaction does.
 */
export function pglitePreparedStatements(lite: PGlite, limit: number) {
  // In order of preparation: past the limit the oldest is closed, so the session's memory stays bounded.
  const prepared = new Map<string, Prepared>();
  let named = 0;

  const prepare = async (sql: string): Promise<Prepared> => {
    const known = prepared.get(sql);
    if (known) return known;
    const name = `tolov_${++named}`;
    // A failed parse throws (after the sync, so the session is ready again) and leaves no name behind.
    const messages = await lite.execProtocolStream(
      concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]),
      { syncToFs: false },
    );
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(messages) };
    const evicted = setNewest(prepared, sql, statement, limit);
    if (evicted) {
      await lite.execProtocolStream(concat([serialize.close({ type: 'S', name: evicted.name }), serialize.sync()]), { syncToFs: false });
    }
    return statement;
  };

  return async <Row>(sql: string, params: readonly unknown[] | undefined, durable: boolean): Promise<Row[]> => {
    const statement = await prepare(sql);
    const values = (params ?? []).map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = lite.serializers[statement.parameterTypes[index]!];
      // A lone surrogate (valid in a JavaScript string, not in UTF-8) would make PGlite's bind message count its length
      // wrong and the engine refuse the bytes; it becomes U+FFFD, as node-postgres encodes it on the other engine.
      return (serializer ? serializer(value) : String(value)).replace(LONE_SURROGATE, '\uFFFD');
    });
    const messages = await lite.execProtocolStream(
      concat([
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ]),
      { syncToFs: durable },
    );
    return (parse.parseResults(messages, lite.parsers)[0]?.rows ?? []) as Row[];
  };
}
