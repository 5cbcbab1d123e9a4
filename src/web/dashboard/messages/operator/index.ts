// The operator console's words, by area, each in Uzbek, Russian and English (typed against English, as the
// dashboard's are).
import * as auth from './auth.js';
import * as review from './review.js';
import * as support from './support.js';
import type { Lang } from '../../../language.js';

export type OperatorMessages = typeof auth.en & typeof review.en & typeof support.en;

export const OPERATOR_MESSAGES: Record<Lang, OperatorMessages> = {
  en: { ...auth.en, ...review.en, ...support.en },
  ru: { ...auth.ru, ...review.ru, ...support.ru },
  uz: { ...auth.uz, ...review.uz, ...support.uz },
};
