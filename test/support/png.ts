// Small PNG images drawn in code, for logos in tests.
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A `width`×`height` RGBA PNG whose pixel at (x, y) is `paint(x, y)` ([r, g, b, a]). */
export function png(width: number, height: number, paint: (x: number, y: number) => [number, number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, no interlace
  const rows = Buffer.alloc(height * (1 + width * 4));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) rows.set(paint(x, y), y * (1 + width * 4) + 1 + x * 4);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A shop's logo: a disc in `rgb` and three bars beside it, on transparency. */
export function logoPng(rgb: [number, number, number]): Buffer {
  return png(150, 44, (x, y) => {
    const inDisc = (x - 22) ** 2 + (y - 22) ** 2 <= 20 ** 2;
    const inBar = x >= 52 && x < 146 && [8, 19, 30].some((top) => y >= top && y < top + 6) && (y < 30 || x < 110);
    return inDisc || inBar ? [...rgb, 255] : [0, 0, 0, 0];
  });
}

export const dataUrl = (type: string, body: Buffer) => `data:${type};base64,${body.toString('base64')}`;
