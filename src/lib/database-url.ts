// DATABASE_URL in libpq's form, which may list several hosts: `postgres://user@h1:5432,h2:5433/db?sslmode=require`.
// Each host gets a connection string of its own, with the same user, database and parameters.

/** A DATABASE_URL lists at most this many hosts. */
export const DATABASE_HOSTS_MAX = 16;

// The user part runs to the last @ before the path: a password may hold an unencoded @, as libpq and pg allow.
const URL_FORM = /^(postgres(?:ql)?:\/\/)([^/?#]*@)?([^/?#]*)(.*)$/is;

/**
 * The connection string of each host a DATABASE_URL lists, in its order; a URL that names one host is its only one,
 * unchanged. Null when a listed host is empty or the list is too long.
 */
export function databaseHosts(url: string): string[] | null {
  const match = URL_FORM.exec(url);
  if (!match || !match[3]!.includes(',')) return [url];
  const [, scheme, user = '', hosts, rest] = match as unknown as [string, string, string | undefined, string, string];
  const listed = hosts.split(',');
  if (listed.length > DATABASE_HOSTS_MAX || listed.some((host) => host === '')) return null;
  return listed.map((host) => `${scheme}${user}${host}${rest}`);
}

/** Where a connection string points, for messages: `host:port`, never its password. */
export function hostOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`;
}
