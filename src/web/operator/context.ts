// What each console request carries beyond the shared page context (language, form token): the operator signed in, if
// any, and the checks of what they may open and do.
import type { FastifyRequest } from 'fastify';
import type { OperatorSession } from '../../modules/operators/service.js';
import type { OperatorRole } from '../../modules/operators/store.js';
import { DashboardError, SignInRequired } from '../dashboard/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    operator: OperatorSession | null;
  }
}

/** A session whose login has no second factor yet: it opens the set-up and nothing else. */
export class SecondFactorSetUpRequired extends Error {}

/** The operator's session, whatever it proved: the set-up of the second factor and the log-out take this. */
export function operatorSession(request: FastifyRequest): OperatorSession {
  if (request.operator === null) throw new SignInRequired('sign in first');
  return request.operator;
}

/** The signed-in operator, once the second factor is proved: every page but its set-up. */
export function operatorOf(request: FastifyRequest): OperatorSession {
  const session = operatorSession(request);
  if (!session.second_factor) throw new SecondFactorSetUpRequired('set up the second factor first');
  return session;
}

/** Refuses unless the operator's role is one of `roles`. */
export function requireOperatorRole(session: OperatorSession, roles: readonly OperatorRole[]): void {
  if (!roles.includes(session.role)) throw new DashboardError(403, 'forbidden');
}

/** Money actions and settings: admins only. Support reads. */
export const ACTS: readonly OperatorRole[] = ['admin'];

/** Console routes are the dashboard's kind: no API credential (the session is checked here), no place in the API's description. */
export { ROUTE } from '../dashboard/context.js';
