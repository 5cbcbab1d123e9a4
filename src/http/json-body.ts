// A request body is read as written, before JSON.parse loses what it cannot represent: a repeated key (JSON.parse keeps
// the last, silently) and a number written with a fraction or an exponent (999999999999.99999 parses as the whole
// 1000000000000). Every number Tolov takes is a whole number, so such a number reaches validation as text, and
// validation names its field ("amount must be an integer").
//
// The body is read by a maintained streaming tokenizer in one pass over its bytes, so the work is linear in its size
// whatever it holds: a regular expression over strings rescanned to the end from every quote (64 KB took seconds).
import { Tokenizer, TokenType, type ParsedTokenInfo } from '@streamparser/json';
import { ApiError } from '../core/errors.js';

const WHOLE_NUMBER = /^-?\d+$/;

interface Container {
  /** The keys read so far in an object; null for an array. */
  keys: Set<string> | null;
  /** The key last read in this object: the one an open child object or array sits under. */
  key: string | null;
}

/** Tracks objects and arrays as tokens arrive, refusing a repeated key and noting the numbers to turn into text. */
class BodyTokenizer extends Tokenizer {
  /** Numbers written with a fraction or an exponent: their byte offset in the body and their text. */
  readonly fractions: Array<{ offset: number; text: string }> = [];
  private readonly stack: Container[] = [];
  private previous: TokenType | null = null;

  // The tokenizer's documented way to keep a number as written: its value reaches onToken as the text itself.
  protected override parseNumber(text: string): number {
    return text as unknown as number;
  }

  override onToken({ token, value, offset }: ParsedTokenInfo): void {
    const top = this.stack.at(-1);
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      this.stack.push({ keys: token === TokenType.LEFT_BRACE ? new Set() : null, key: null });
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      this.stack.pop();
    } else if (token === TokenType.STRING && top?.keys && (this.previous === TokenType.LEFT_BRACE || this.previous === TokenType.COMMA)) {
      this.readKey(top, top.keys, value as string);
    } else if (token === TokenType.COMMA && top?.keys) {
      top.key = null;
    } else if (token === TokenType.NUMBER && !WHOLE_NUMBER.test(value as string)) {
      this.fractions.push({ offset, text: value as string });
    }
    this.previous = token;
  }

  private readKey(object: Container, keys: Set<string>, key: string): void {
    if (keys.has(key)) {
      // The path is built only here, from the keys the open containers sit under (arrays add none).
      const path = [...this.stack.slice(0, -1).flatMap((container) => container.key ?? []), key].join('.');
      throw new ApiError('VALIDATION_ERROR', `The body repeats the key ${path}`, { param: path });
    }
    keys.add(key);
    object.key = key;
  }
}

/**
 * The body's JSON text with every number that is not written as a whole number turned into a string; a repeated key is
 * refused naming where it is. Text that is not JSON throws a SyntaxError (or the tokenizer's error); JSON.parse checks
 * the grammar afterwards.
 */
export function strictJsonText(text: string): string {
  // JSON.parse refuses a byte-order mark; the tokenizer would skip it and count its offsets from after it.
  if (text.charCodeAt(0) === 0xfeff) throw new SyntaxError('A JSON body has no byte-order mark');
  const bytes = Buffer.from(text, 'utf8');
  const tokenizer = new BodyTokenizer();
  tokenizer.write(bytes);
  tokenizer.end();
  if (tokenizer.fractions.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const { offset, text: number } of tokenizer.fractions) {
    parts.push(bytes.toString('utf8', at, offset), JSON.stringify(number));
    at = offset + number.length;
  }
  parts.push(bytes.toString('utf8', at));
  return parts.join('');
}
