// Types of screens.js, for the server's first HTML.
import type { SessionState } from '../../modules/checkout/schema.js';

export type ScreenName = 'expired' | 'notFound' | 'loading' | 'paid' | 'done' | 'processing' | 'refused' | 'canceled' | 'failed' | 'code' | 'pay' | 'bind';
export interface Screen {
  name: ScreenName;
  symbol: 'warning' | 'success' | 'pending' | null;
  final: boolean;
  summary: boolean;
  /** The bank's reason, on the `refused` screen. */
  reason?: string | null;
}
export declare function screenOf(session: SessionState | null, gone: 'expired' | 'notFound' | null): Screen;
export declare function isOpen(session: SessionState): boolean;
export declare function clock(seconds: number): string;
