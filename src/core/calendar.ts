// Dates as Tolov takes them in queries: a day written YYYY-MM-DD must exist in the calendar (2026-02-30 does not;
// JavaScript's Date would silently read it as March 2).

/** Whether `date` is YYYY-MM-DD and a real UTC calendar day; the calendar starts with year 1 (there is no year 0). */
export function isCalendarDay(date: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || date < '0001-01-01') return false;
  const day = new Date(`${date}T00:00:00.000Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === date;
}
