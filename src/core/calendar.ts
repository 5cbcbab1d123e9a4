// Dates as Tolov takes them in queries: a day written YYYY-MM-DD must exist in the calendar (2026-02-30 does not;
// JavaScript's Date would silently read it as March 2).

/** Whether `date` is YYYY-MM-DD and a real UTC calendar day; the calendar starts with year 1 (there is no year 0). */
export function isCalendarDay(date: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || date < '0001-01-01') return false;
  const day = new Date(`${date}T00:00:00.000Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === date;
}

/** Tashkent's offset from UTC: five hours, all year (Uzbekistan keeps no daylight saving). */
export const TASHKENT_OFFSET_MS = 5 * 3_600_000;

/** The Tashkent calendar day of an instant, YYYY-MM-DD. */
export function tashkentDay(at: Date): string {
  return new Date(at.getTime() + TASHKENT_OFFSET_MS).toISOString().slice(0, 10);
}

/** The instant a Tashkent day reaches `minutes` after its midnight. */
export function tashkentInstant(day: string, minutes: number): Date {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) - TASHKENT_OFFSET_MS + minutes * 60_000);
}

/** The Tashkent day after `day`. */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
}
