// The words of a payment link's page in Uzbek, Russian and English; the words it shares with the other hosted pages
// (the shop's name, test mode, link not found) are theirs (assets/i18n.js).
import type { Lang } from './language.js';

export interface LinkTexts {
  /** The page's title when the link names no amount of its own. */
  title: string;
  amount: string;
  /** The label of the amount the buyer enters, with its unit. */
  chooseAmount: string;
  range(min: string, max: string): string;
  amountError(min: string, max: string): string;
  pay: string;
  payAmount(amount: string): string;
  next: string;
  inactiveTitle: string;
  inactiveText: string;
  soldOutTitle: string;
  soldOutText: string;
}

const TEXTS: Record<Lang, LinkTexts> = {
  uz: {
    title: 'Toʻlov',
    amount: 'Toʻlov summasi',
    chooseAmount: 'Summa, soʻm',
    range: (min, max) => `${min} dan ${max} gacha`,
    amountError: (min, max) => `${min} dan ${max} gacha summani kiriting`,
    pay: 'Toʻlash',
    payAmount: (amount) => `${amount} toʻlash`,
    next: 'Keyingi sahifada karta maʼlumotlarini kiritasiz.',
    inactiveTitle: 'Bu havola oʻchirilgan',
    inactiveText: 'Doʻkon bu havola orqali toʻlovlarni qabul qilmayapti. Yangi havolani doʻkondan soʻrang.',
    soldOutTitle: 'Hammasi sotilgan',
    soldOutText: 'Bu havola boʻyicha joylar qolmadi. Birozdan keyin qayta urinib koʻring yoki doʻkonga murojaat qiling.',
  },
  ru: {
    title: 'Оплата',
    amount: 'Сумма платежа',
    chooseAmount: 'Сумма, сум',
    range: (min, max) => `От ${min} до ${max}`,
    amountError: (min, max) => `Введите сумму от ${min} до ${max}`,
    pay: 'Оплатить',
    payAmount: (amount) => `Оплатить ${amount}`,
    next: 'Данные карты вы введёте на следующей странице.',
    inactiveTitle: 'Ссылка отключена',
    inactiveText: 'Магазин больше не принимает оплату по этой ссылке. Попросите у магазина новую.',
    soldOutTitle: 'Всё распродано',
    soldOutText: 'По этой ссылке мест не осталось. Попробуйте чуть позже или свяжитесь с магазином.',
  },
  en: {
    title: 'Payment',
    amount: 'Amount to pay',
    chooseAmount: 'Amount, UZS',
    range: (min, max) => `From ${min} to ${max}`,
    amountError: (min, max) => `Enter an amount from ${min} to ${max}`,
    pay: 'Pay',
    payAmount: (amount) => `Pay ${amount}`,
    next: 'You enter your card on the next page.',
    inactiveTitle: 'This link is turned off',
    inactiveText: 'The shop no longer takes payments through this link. Ask the shop for a new one.',
    soldOutTitle: 'Sold out',
    soldOutText: 'No places are left through this link. Try again a little later, or contact the shop.',
  },
};

export const linkTextsFor = (lang: Lang): LinkTexts => TEXTS[lang];
