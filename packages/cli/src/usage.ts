/** A command used the wrong way: said as is, exit status 2. */
export class UsageError extends Error {}
