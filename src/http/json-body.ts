// A request body is read as written, before JSON.parse loses what it cannot represent: a repeated key (JSON.parse keeps
// the last, silently) and a number written with a fraction or an exponent (999999999999.99999 parses as the whole
// 1000000000000). Every number Tolov takes is a whole number, so such a number reaches validation as text, and
// validation names its field ("amount must be an integer").
import { ApiError } from '../core/errors.js';

/** Strings, numbers and the punctuation that opens, separates and closes objects and arrays. */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[{}[\]:,]/g;

interface Container {
  keys: Set<string> | null;
  path: string;
  /** The key last read in this object, until its value ends. */
  key: string | null;
}

/**
 * The body's JSON text with every number that is not written as a whole number turned into a string; a repeated key is
 * refused naming where it is. The text is assumed to be JSON only as far as JSON.parse will check it afterwards.
 */
export function strictJsonText(text: string): string {
  const stack: Container[] = [];
  let previous = '';
  const rewritten = text.replace(TOKEN, (token) => {
    const top = stack.at(-1);
    if (token === '{' || token === '[') {
      const path = top?.key !== null && top?.key !== undefined ? join(top.path, top.key) : (top?.path ?? '');
      stack.push({ keys: token === '{' ? new Set() : null, path, key: null });
    } else if (token === '}' || token === ']') {
      stack.pop();
    } else if (token.startsWith('"') && top?.keys && (previous === '{' || previous === ',')) {
      const key = JSON.parse(token) as string;
      if (top.keys.has(key)) throw new ApiError('VALIDATION_ERROR', `The body repeats the key ${join(top.path, key)}`, { param: join(top.path, key) });
      top.keys.add(key);
      top.key = key;
    } else if (token === ',' && top?.keys) {
      top.key = null;
    }
    previous = token;
    return /^-?\d+$/.test(token) || !/^-?\d/.test(token) ? token : JSON.stringify(token);
  });
  return rewritten;
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);
