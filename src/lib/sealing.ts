// Secrets the service must read back (webhook signing secrets, TOTP seeds) are stored sealed with AES-256-GCM under a
// key held outside the database: a copy of the database alone does not give them away.
//
// A sealed value is `v1.<key id>.<nonce>.<ciphertext and tag>` (base64url parts). The key id names the key that sealed
// it, so that after a rotation values sealed under a previous key are still opened, and sealed again under the new one.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

/** A short public name of a key: its fingerprint, never the key. */
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('base64url').slice(0, 8);

export class SealingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealingError';
  }
}

export class Sealer {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  /** `current` seals; it and every key of `previous` open. */
  constructor(
    private readonly current: Buffer,
    previous: Buffer[] = [],
  ) {
    for (const key of [current, ...previous]) {
      if (key.length !== KEY_BYTES) throw new SealingError(`a sealing key is ${KEY_BYTES} bytes, not ${key.length}`);
      this.keys.set(keyIdOf(key), key);
    }
    this.currentKeyId = keyIdOf(current);
  }

  seal(plain: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current, nonce);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.currentKeyId, nonce.toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, keyId, nonce, body] = sealed.split('.');
    if (version !== VERSION || keyId === undefined || nonce === undefined || body === undefined) {
      throw new SealingError('not a sealed value');
    }
    const key = this.keys.get(keyId);
    if (!key) throw new SealingError(`sealed under key ${keyId}, which is neither TOLOV_SECRETS_KEY nor a previous key`);
    const bytes = Buffer.from(body, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealingError(`a value sealed under key ${keyId} does not open: altered, or sealed under another key of that id`);
    }
  }

  /** Whether `sealed` was sealed under the current key (else it should be sealed again). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.currentKeyId;
  }
}

/** A key given as base64 text (`openssl rand -base64 32`); null if it is not 32 bytes so written. */
export function parseSealingKey(text: string): Buffer | null {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text.trim())) return null;
  const key = Buffer.from(text.trim(), 'base64');
  return key.length === KEY_BYTES ? key : null;
}

/** The key in `path`, made there (readable by this user alone) when there is none yet. */
export async function keyFromFile(path: string): Promise<Buffer> {
  try {
    const key = parseSealingKey(await readFile(path, 'utf8'));
    if (!key) throw new SealingError(`${path} does not hold a base64 key of ${KEY_BYTES} bytes`);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(KEY_BYTES);
  await mkdir(dirname(path), { recursive: true });
  // `wx`: of two processes making it at once, one writes and the other reads what it wrote.
  try {
    await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return keyFromFile(path);
    throw error;
  }
  await chmod(path, 0o600);
  return key;
}
