// A brand colour as the hosted pages' stylesheet: buttons take the colour with the ink that reads on it, and text in
// the colour (links, notices) keeps to a shade that reads on white, whatever colour a merchant picks.

/** WCAG's contrast a text needs on its background (AA, normal size). */
const CONTRAST_MIN = 4.5;
const WHITE = [255, 255, 255] as const;
const INK = [20, 33, 61] as const; // theme.css's --ink
/** The pages' colour when a product has none: theme.css's --accent. */
export const TOLOV_ACCENT = '#0b6e4f';

type Rgb = readonly [number, number, number];

const rgbOf = (hex: string): Rgb => [0, 2, 4].map((at) => parseInt(hex.slice(at, at + 2), 16)) as unknown as Rgb;
const hexOf = (rgb: Rgb) => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as unknown as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: Rgb, b: Rgb): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The colour darkened step by step until it reads on white (at most 20 steps, which reach black). */
function readableOnWhite(rgb: Rgb): Rgb {
  let shade = rgb;
  for (let step = 0; step < 20 && contrast(shade, WHITE) < CONTRAST_MIN; step++) shade = shade.map((c) => c * 0.85) as unknown as Rgb;
  return shade;
}

/** What a brand colour (`hex`: six hex digits, lower case) becomes: the ink on a button of it, and its shade as text. */
export function accentOf(hex: string): { ink: string; text: string } {
  const rgb = rgbOf(hex);
  const ink = contrast(rgb, WHITE) >= contrast(rgb, INK) ? WHITE : INK;
  return { ink: hexOf(ink), text: hexOf(readableOnWhite(rgb)) };
}

export function brandStylesheet(hex: string): string {
  const { ink, text } = accentOf(hex);
  return `:root { --accent: #${hex}; --accent-ink: ${ink}; --accent-text: ${text}; }\n`;
}
