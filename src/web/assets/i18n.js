// Texts of the hosted pages in Uzbek (the default), Russian and English.
export const LANGUAGES = { uz: 'Oʻzbekcha', ru: 'Русский', en: 'English' };
export const DEFAULT_LANGUAGE = 'uz';

/** The national digits of the documented test phone, kept on one line wherever the hint wraps. */
const PHONE_EXAMPLE = '90\u00a0123\u00a045\u00a067';

/** Digit grouping and decimal mark per language (uz and ru: 1 500 000,00; en: 1,500,000.00). */
const NUMBER_MARKS = { uz: ['\u00a0', ','], ru: ['\u00a0', ','], en: [',', '.'] };

/**
 * An amount in tiyin as so'm, exactly: the digits are split as text, so no floating point ever touches money.
 * `150000050` → `1 500 000,50 soʻm` (Uzbek).
 */
export function formatAmount(tiyin, language) {
  const [group, decimal] = NUMBER_MARKS[language] ?? NUMBER_MARKS[DEFAULT_LANGUAGE];
  const digits = String(tiyin).padStart(3, '0');
  const whole = digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, group);
  return textsFor(language).currency(`${whole}${decimal}${digits.slice(-2)}`);
}

/**
 * A receipt line's count, price and what else the buyer should know of it, as the receipt writes it:
 * `2 × 50 000,00 soʻm · chegirma 5 000,00 soʻm · QQS 12%`.
 */
export function describeLine({ count, price, discount, vatPercent }, language) {
  const texts = textsFor(language).receipt;
  const parts = [`${count} × ${formatAmount(price, language)}`, discount > 0 ? texts.discount(formatAmount(discount, language)) : null, texts.vatRate(vatPercent)];
  // Each part kept whole on a narrow screen: the line breaks between them, never inside an amount and its currency.
  return parts
    .filter(Boolean)
    .map((part) => part.replaceAll(' ', '\u00a0'))
    .join(' · ');
}

/** Uzbek month names: browsers' own Uzbek dates are often missing or half-translated ("2026 M11 24"). */
const UZBEK_MONTHS = ['yanvar', 'fevral', 'mart', 'aprel', 'may', 'iyun', 'iyul', 'avgust', 'sentabr', 'oktabr', 'noyabr', 'dekabr'];

/**
 * A moment as the buyer's language writes it, in `timeZone` (the buyer's own when not given; a receipt's is
 * Tashkent's): `24-noyabr 2026, 11:16`, `24 ноября 2026 г. в 11:16`.
 */
export function formatDateTime(date, language, timeZone = undefined) {
  if (language === 'uz') {
    const numeric = { year: 'numeric', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone };
    const part = Object.fromEntries(new Intl.DateTimeFormat('en-GB', numeric).formatToParts(date).map(({ type, value }) => [type, value]));
    return `${Number(part.day)}-${UZBEK_MONTHS[Number(part.month) - 1]} ${part.year}, ${part.hour}:${part.minute}`;
  }
  return new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone }).format(date);
}

/** Russian counts agree with their noun: 1 раз, 2–4 раза, 5–20 раз, 21 раз, 22 раза… */
function russianPlural(n, one, few, many) {
  const ten = n % 10;
  const hundred = n % 100;
  if (ten === 1 && hundred !== 11) return one;
  if (ten >= 2 && ten <= 4 && (hundred < 12 || hundred > 14)) return few;
  return many;
}

const TEXTS = {
  uz: {
    payTitle: 'Buyurtmani toʻlash',
    amountLabel: 'Toʻlov summasi',
    currency: (digits) => `${digits} soʻm`,
    timeLeft: (left) => `Toʻlash uchun ${left} qoldi`,
    saveCard: 'Kartani keyingi xaridlar uchun saqlash',
    consent: (name) => `Kartani saqlab, siz «${name}» doʻkoniga keyingi xaridlaringiz uchun undan pul yechishga ruxsat berasiz. Kartani oʻchirishni istalgan vaqtda doʻkondan soʻrashingiz mumkin.`,
    payButton: (amount) => `${amount} toʻlash`,
    paidTitle: 'Toʻlov qabul qilindi',
    receipt: {
      title: 'Chek',
      merchant: 'Doʻkon',
      amount: 'Summa',
      card: 'Karta',
      date: 'Sana',
      reference: 'Toʻlov raqami',
      saleTitle: 'Sotuv cheki',
      returnTitle: 'Qaytarish cheki',
      lines: 'Xaridlar',
      discount: (amount) => `chegirma ${amount}`,
      vatRate: (percent) => `QQS ${percent}%`,
      total: 'Jami',
      refunded: 'Qaytarildi',
      vat: 'Shu jumladan QQS',
      tashkentTime: (time) => `${time} (Toshkent vaqti)`,
      pending: 'Chek soliq tizimida roʻyxatdan oʻtkazilmoqda: uning QR-kodi tayyor boʻlishi bilan shu yerda chiqadi.',
      refreshing: 'Sahifa oʻzi yangilanadi.',
      reloadLater: 'Birozdan soʻng sahifani yangilang.',
      failed: 'Chekni soliq tizimida roʻyxatdan oʻtkazib boʻlmadi. Doʻkon chekni sizga alohida yuboradi.',
      number: 'Chek raqami',
      sign: 'Fiskal belgi',
      terminal: 'Fiskal modul',
      qr: 'Chekning QR-kodi',
      scan: 'QR-kodni skanerlab, chekni soliq.uz saytida tekshiring.',
      check: 'soliq.uz saytida tekshirish',
      open: 'Chekni ochish va chop etish',
      print: 'Chop etish',
    },
    cardSaved: (card) => `${card} kartasi keyingi xaridlar uchun saqlandi.`,
    refusedTitle: 'Toʻlov rad etildi',
    refusedText: 'Pul yechilmadi. Doʻkonga qaytib, boshqa karta bilan qayta buyurtma bering.',
    processingTitle: 'Bank toʻlovni tasdiqlamoqda',
    processingText: 'Bu bir necha daqiqa olishi mumkin. Natija shu yerda chiqadi, qayta toʻlamang.',
    canceledTitle: 'Buyurtma bekor qilingan',
    canceledText: 'Doʻkon bu buyurtmani bekor qildi. Pul yechilmadi.',
    reasons: {
      INSUFFICIENT_FUNDS: 'Kartada mablagʻ yetarli emas.',
      CARD_BLOCKED: 'Karta bloklangan.',
      PROCESSING_ERROR: 'Bank toʻlovni amalga oshira olmadi.',
    },
    bindTitle: 'Kartani ulash',
    bindLead: 'Keyingi safar tezroq toʻlash uchun kartangizni bir marta kiriting.',
    forMerchant: (name) => `${name} uchun`,
    testMode: 'Test rejimi: haqiqiy pul yechilmaydi',
    pan: 'Karta raqami',
    expiry: 'Amal qilish muddati',
    expiryHint: 'OO/YY',
    phone: 'Kartaga ulangan telefon raqami',
    phoneHint: `+998 kodidan keyingi 9 ta raqam, masalan ${PHONE_EXAMPLE}`,
    continue: 'Davom etish',
    cardAttempts: (n) => `Yana ${n} marta karta kiritish mumkin.`,
    codeTitle: 'SMS-kodni kiriting',
    codeSent: (card) => `${card} kartasiga ulangan telefonga kod yubordik.`,
    code: 'SMS-kod',
    confirm: 'Tasdiqlash',
    resend: 'Kodni qayta yuborish',
    resendIn: (s) => `Kodni ${s} soniyadan soʻng qayta yuborish mumkin`,
    resent: 'Yangi kod yuborildi.',
    codeAttempts: (n) => `Yana ${n} marta urinish mumkin.`,
    doneTitle: 'Karta ulandi',
    doneText: (card) => `${card} kartasi saqlandi.`,
    returning: 'Doʻkonga qaytmoqdamiz…',
    closeHint: 'Endi bu sahifani yopishingiz mumkin.',
    backToShop: 'Doʻkonga qaytish',
    expiredTitle: 'Havolaning muddati tugagan',
    expiredText: 'Doʻkonga qaytib, qaytadan urinib koʻring.',
    notFoundTitle: 'Havola topilmadi',
    notFoundText: 'Havolani tekshiring yoki doʻkondan yangisini soʻrang.',
    suspendedTitle: 'Bu doʻkon hozir toʻlov qabul qila olmaydi',
    suspendedText: 'Hech qanday pul yechilmadi. Doʻkonga qayting yoki keyinroq urinib koʻring.',
    failedTitle: 'Urinishlar tugadi',
    failedText: 'Xavfsizlik uchun bu havola yopildi. Doʻkonga qaytib, qaytadan boshlang.',
    secure: 'Karta maʼlumotlari toʻgʻridan-toʻgʻri bankka yuboriladi. Biz faqat bank tokeni va yashirilgan raqamni saqlaymiz: toʻliq karta raqami va SMS-kod saqlanmaydi.',
    errors: {
      panLength: 'Karta raqami 16 ta raqamdan iborat boʻlishi kerak',
      panLuhn: 'Karta raqamida xato bor',
      panNetwork: 'Faqat Uzcard (8600) va Humo (9860) kartalari qabul qilinadi',
      expiryFormat: 'Muddatni OO/YY koʻrinishida kiriting',
      expired: 'Kartaning muddati tugagan',
      phone: 'Oʻzbekiston mobil raqamini kiriting: +998 kodidan keyin 9 ta raqam',
      code: 'Kodni kiriting',
      CARD_INACTIVE: 'Bank bu kartani qabul qilmadi: u faol emas yoki bloklangan',
      WRONG_CODE: 'Kod notoʻgʻri',
      TOO_MANY_ATTEMPTS: 'Urinishlar soni tugadi',
      RATE_LIMITED: 'Biroz kuting va qaytadan urinib koʻring',
      INVALID_STATE: 'Sahifa eskirgan, yangilanmoqda',
      PRODUCT_SUSPENDED: 'Bu doʻkon hozir toʻlov qabul qila olmaydi',
      network: 'Aloqa uzildi. Qaytadan urinib koʻring',
      generic: 'Xatolik yuz berdi. Qaytadan urinib koʻring',
    },
  },
  ru: {
    payTitle: 'Оплата заказа',
    amountLabel: 'Сумма к оплате',
    currency: (digits) => `${digits} сум`,
    timeLeft: (left) => `На оплату осталось ${left}`,
    saveCard: 'Сохранить карту для следующих покупок',
    consent: (name) => `Сохраняя карту, вы разрешаете магазину «${name}» списывать с неё оплату ваших следующих покупок. Удалить карту можно в любой момент, попросив об этом магазин.`,
    payButton: (amount) => `Оплатить ${amount}`,
    paidTitle: 'Оплата прошла',
    receipt: {
      title: 'Чек',
      merchant: 'Магазин',
      amount: 'Сумма',
      card: 'Карта',
      date: 'Дата',
      reference: 'Номер платежа',
      saleTitle: 'Чек продажи',
      returnTitle: 'Чек возврата',
      lines: 'Покупки',
      discount: (amount) => `скидка ${amount}`,
      vatRate: (percent) => `НДС ${percent}%`,
      total: 'Итого',
      refunded: 'Возвращено',
      vat: 'В том числе НДС',
      tashkentTime: (time) => `${time} (время Ташкента)`,
      pending: 'Чек регистрируется в налоговой системе: его QR-код появится здесь, как только будет готов.',
      refreshing: 'Страница обновится сама.',
      reloadLater: 'Обновите страницу чуть позже.',
      failed: 'Не удалось зарегистрировать чек в налоговой системе. Магазин пришлёт его вам отдельно.',
      number: 'Номер чека',
      sign: 'Фискальный признак',
      terminal: 'Фискальный модуль',
      qr: 'QR-код чека',
      scan: 'Отсканируйте QR-код, чтобы проверить чек на сайте soliq.uz.',
      check: 'Проверить на soliq.uz',
      open: 'Открыть чек для печати',
      print: 'Распечатать',
    },
    cardSaved: (card) => `Карта ${card} сохранена для следующих покупок.`,
    refusedTitle: 'Банк отклонил оплату',
    refusedText: 'Деньги не списаны. Вернитесь в магазин и оформите заказ с другой картой.',
    processingTitle: 'Банк подтверждает оплату',
    processingText: 'Это может занять несколько минут. Результат появится здесь; не оплачивайте повторно.',
    canceledTitle: 'Заказ отменён',
    canceledText: 'Магазин отменил этот заказ. Деньги не списаны.',
    reasons: {
      INSUFFICIENT_FUNDS: 'На карте недостаточно средств.',
      CARD_BLOCKED: 'Карта заблокирована.',
      PROCESSING_ERROR: 'Банк не смог провести оплату.',
    },
    bindTitle: 'Привязка карты',
    bindLead: 'Введите карту один раз, чтобы в следующий раз платить быстрее.',
    forMerchant: (name) => `Для ${name}`,
    testMode: 'Тестовый режим: деньги не списываются',
    pan: 'Номер карты',
    expiry: 'Срок действия',
    expiryHint: 'ММ/ГГ',
    phone: 'Телефон, привязанный к карте',
    phoneHint: `9 цифр после +998, например ${PHONE_EXAMPLE}`,
    continue: 'Продолжить',
    cardAttempts: (n) => `Можно ввести карту ещё ${n} ${russianPlural(n, 'раз', 'раза', 'раз')}.`,
    codeTitle: 'Введите код из SMS',
    codeSent: (card) => `Мы отправили код на телефон, привязанный к карте ${card}.`,
    code: 'Код из SMS',
    confirm: 'Подтвердить',
    resend: 'Отправить код ещё раз',
    resendIn: (s) => `Новый код можно запросить через ${s}\u00a0с`,
    resent: 'Новый код отправлен.',
    codeAttempts: (n) => `Осталось попыток: ${n}.`,
    doneTitle: 'Карта привязана',
    doneText: (card) => `Карта ${card} сохранена.`,
    returning: 'Возвращаемся в магазин…',
    closeHint: 'Эту страницу можно закрыть.',
    backToShop: 'Вернуться в магазин',
    expiredTitle: 'Срок действия ссылки истёк',
    expiredText: 'Вернитесь в магазин и попробуйте ещё раз.',
    notFoundTitle: 'Ссылка не найдена',
    notFoundText: 'Проверьте ссылку или попросите у магазина новую.',
    suspendedTitle: 'Этот магазин сейчас не принимает платежи',
    suspendedText: 'Деньги не списаны. Вернитесь в магазин или попробуйте позже.',
    failedTitle: 'Попытки закончились',
    failedText: 'В целях безопасности ссылка больше не действует. Вернитесь в магазин и начните заново.',
    secure: 'Данные карты передаются напрямую в банк. Мы храним только токен банка и маскированный номер: полный номер карты и SMS-код не сохраняются.',
    errors: {
      panLength: 'Номер карты должен состоять из 16 цифр',
      panLuhn: 'В номере карты ошибка',
      panNetwork: 'Принимаются только карты Uzcard (8600) и Humo (9860)',
      expiryFormat: 'Введите срок в формате ММ/ГГ',
      expired: 'Срок действия карты истёк',
      phone: 'Введите узбекский мобильный номер: 9 цифр после +998',
      code: 'Введите код',
      CARD_INACTIVE: 'Банк не принял эту карту: она неактивна или заблокирована',
      WRONG_CODE: 'Неверный код',
      TOO_MANY_ATTEMPTS: 'Попытки закончились',
      RATE_LIMITED: 'Подождите немного и попробуйте снова',
      INVALID_STATE: 'Страница устарела, обновляем',
      PRODUCT_SUSPENDED: 'Этот магазин сейчас не принимает платежи',
      network: 'Нет связи. Попробуйте ещё раз',
      generic: 'Что-то пошло не так. Попробуйте ещё раз',
    },
  },
  en: {
    payTitle: 'Pay for your order',
    amountLabel: 'Amount to pay',
    currency: (digits) => `UZS ${digits}`,
    timeLeft: (left) => `${left} left to pay`,
    saveCard: 'Save this card for my next purchases',
    consent: (name) => `By saving the card you allow ${name} to charge it for your future purchases. You can ask the shop to remove it at any time.`,
    payButton: (amount) => `Pay ${amount}`,
    paidTitle: 'Payment received',
    receipt: {
      title: 'Receipt',
      merchant: 'Paid to',
      amount: 'Amount',
      card: 'Card',
      date: 'Date',
      reference: 'Payment reference',
      saleTitle: 'Sales receipt',
      returnTitle: 'Refund receipt',
      lines: 'Purchases',
      discount: (amount) => `discount ${amount}`,
      vatRate: (percent) => `VAT ${percent}%`,
      total: 'Total',
      refunded: 'Refunded',
      vat: 'Including VAT',
      tashkentTime: (time) => `${time} (Tashkent time)`,
      pending: 'The receipt is being registered with the tax authority: its QR code will appear here as soon as it is ready.',
      refreshing: 'This page updates itself.',
      reloadLater: 'Reload this page a little later.',
      failed: 'The receipt could not be registered with the tax authority. The shop will send it to you separately.',
      number: 'Receipt number',
      sign: 'Fiscal sign',
      terminal: 'Fiscal module',
      qr: 'QR code of the receipt',
      scan: 'Scan the QR code to check the receipt on soliq.uz.',
      check: 'Check on soliq.uz',
      open: 'Open the printable receipt',
      print: 'Print',
    },
    cardSaved: (card) => `Card ${card} is saved for your next purchases.`,
    refusedTitle: 'Payment refused',
    refusedText: 'No money was taken. Go back to the shop and order again with another card.',
    processingTitle: 'Your bank is confirming the payment',
    processingText: 'This can take a few minutes. The result will appear here; do not pay again.',
    canceledTitle: 'Order canceled',
    canceledText: 'The shop canceled this order. No money was taken.',
    reasons: {
      INSUFFICIENT_FUNDS: 'There is not enough money on the card.',
      CARD_BLOCKED: 'The card is blocked.',
      PROCESSING_ERROR: 'The bank could not process the payment.',
    },
    bindTitle: 'Link your card',
    bindLead: 'Enter your card once to pay faster next time.',
    forMerchant: (name) => `For ${name}`,
    testMode: 'Test mode: no real money moves',
    pan: 'Card number',
    expiry: 'Expiry date',
    expiryHint: 'MM/YY',
    phone: 'Phone number linked to the card',
    phoneHint: `The 9 digits after +998, e.g. ${PHONE_EXAMPLE}`,
    continue: 'Continue',
    cardAttempts: (n) => `You can enter a card ${n} more ${n === 1 ? 'time' : 'times'}.`,
    codeTitle: 'Enter the SMS code',
    codeSent: (card) => `We sent a code to the phone linked to card ${card}.`,
    code: 'SMS code',
    confirm: 'Confirm',
    resend: 'Send the code again',
    resendIn: (s) => `You can ask for a new code in ${s}\u00a0s`,
    resent: 'A new code is on its way.',
    codeAttempts: (n) => `${n} ${n === 1 ? 'attempt' : 'attempts'} left.`,
    doneTitle: 'Card linked',
    doneText: (card) => `Card ${card} is saved.`,
    returning: 'Taking you back to the shop…',
    closeHint: 'You can close this page now.',
    backToShop: 'Back to the shop',
    expiredTitle: 'This link has expired',
    expiredText: 'Go back to the shop and try again.',
    notFoundTitle: 'Link not found',
    notFoundText: 'Check the link, or ask the shop for a new one.',
    suspendedTitle: 'This shop cannot take payments now',
    suspendedText: 'Nothing was charged. Go back to the shop, or try again later.',
    failedTitle: 'No attempts left',
    failedText: 'For your safety this link is closed. Go back to the shop and start again.',
    secure: 'Card details go straight to the bank. We keep only the bank’s token and the masked number, never the full card number or the SMS code.',
    errors: {
      panLength: 'The card number has 16 digits',
      panLuhn: 'The card number has a typo',
      panNetwork: 'Only Uzcard (8600) and Humo (9860) cards are accepted',
      expiryFormat: 'Enter the expiry as MM/YY',
      expired: 'This card has expired',
      phone: 'Enter an Uzbek mobile number: 9 digits after +998',
      code: 'Enter the code',
      CARD_INACTIVE: 'The bank did not accept this card: it is inactive or blocked',
      WRONG_CODE: 'The code is wrong',
      TOO_MANY_ATTEMPTS: 'No attempts left',
      RATE_LIMITED: 'Please wait a moment and try again',
      INVALID_STATE: 'This page was out of date; refreshing',
      PRODUCT_SUSPENDED: 'This shop cannot take payments now',
      network: 'Connection lost. Please try again',
      generic: 'Something went wrong. Please try again',
    },
  },
};

export function textsFor(language) {
  return Object.hasOwn(TEXTS, language) ? TEXTS[language] : TEXTS[DEFAULT_LANGUAGE];
}
