// The mail accounts send, in the language of the page that caused it. Plain text: links are written out whole, so
// that a reader sees where each goes before opening it.
export type MailLang = 'uz' | 'ru' | 'en';

export type AccountMail =
  | { kind: 'confirm_signup'; link: string; business: string }
  | { kind: 'invitation'; link: string; account: string; role: 'owner' | 'developer' | 'viewer' }
  | { kind: 'account_exists'; login: string; forgot: string }
  | { kind: 'reset_password'; link: string }
  | { kind: 'password_changed'; email: string; forgot: string }
  | { kind: 'operator_invitation'; link: string; role: 'admin' | 'support' };

const ROLES: Record<MailLang, Record<'owner' | 'developer' | 'viewer' | 'admin' | 'support', string>> = {
  en: { owner: 'an owner', developer: 'a developer', viewer: 'a viewer', admin: 'an admin', support: 'support' },
  ru: { owner: 'владелец', developer: 'разработчик', viewer: 'наблюдатель', admin: 'администратор', support: 'поддержка' },
  uz: { owner: 'ega', developer: 'dasturchi', viewer: 'kuzatuvchi', admin: 'administrator', support: 'yordam xizmati' },
};

type Texts = { [K in AccountMail['kind']]: (mail: Extract<AccountMail, { kind: K }>) => { subject: string; text: string } };

const TEXTS: Record<MailLang, Texts> = {
  en: {
    confirm_signup: ({ link, business }) => ({
      subject: 'Confirm your e-mail to finish your Tolov account',
      text: `Someone, we hope you, started a Tolov account for ${business} with this e-mail.\n\nTo finish, open this link within 24 hours:\n${link}\n\nIf it was not you, ignore this mail: no account is made without the link.`,
    }),
    invitation: ({ link, account, role }) => ({
      subject: `You are invited to ${account} on Tolov`,
      text: `You are invited to join the Tolov account of ${account} as ${ROLES.en[role]}.\n\nTo accept, open this link within 7 days:\n${link}\n\nIf you did not expect it, ignore this mail.`,
    }),
    account_exists: ({ login, forgot }) => ({
      subject: 'You have a Tolov account already',
      text: `Someone tried to create a Tolov account with this e-mail, which has one already.\n\nLog in: ${login}\nForgot your password? Set a new one: ${forgot}\n\nIf it was not you, ignore this mail: nothing changed.`,
    }),
    reset_password: ({ link }) => ({
      subject: 'Set a new password for Tolov',
      text: `To set a new password for your Tolov account, open this link within 30 minutes. It works once:\n${link}\n\nIf two-factor authentication is on, its code is still asked when you log in. If you did not ask for this, ignore this mail: your password stays as it is.`,
    }),
    password_changed: ({ email, forgot }) => ({
      subject: 'Your Tolov password was changed',
      text: `The password of your Tolov login ${email} was changed, and its other sessions were ended.\n\nIf it was not you, set a new password now: ${forgot}`,
    }),
    operator_invitation: ({ link, role }) => ({
      subject: "You are invited to Tolov's operator console",
      text: `You are invited to Tolov's operator console as ${ROLES.en[role]}.\n\nTo choose your password, open this link within 7 days. It works once:\n${link}\n\nYou will then set up two-factor authentication: the console opens nothing without it. If you did not expect this, ignore this mail.`,
    }),
  },
  ru: {
    confirm_signup: ({ link, business }) => ({
      subject: 'Подтвердите почту, чтобы завершить создание аккаунта Tolov',
      text: `Кто-то (надеемся, это были вы) начал регистрацию аккаунта Tolov для «${business}» с этой почтой.\n\nЧтобы завершить, откройте ссылку в течение 24 часов:\n${link}\n\nЕсли это были не вы, не обращайте внимания на письмо: без ссылки аккаунт не создаётся.`,
    }),
    invitation: ({ link, account, role }) => ({
      subject: `Приглашение в «${account}» в Tolov`,
      text: `Вас приглашают в аккаунт Tolov «${account}», роль: ${ROLES.ru[role]}.\n\nЧтобы принять, откройте ссылку в течение 7 дней:\n${link}\n\nЕсли вы не ждали приглашения, не обращайте внимания на письмо.`,
    }),
    account_exists: ({ login, forgot }) => ({
      subject: 'У вас уже есть аккаунт Tolov',
      text: `Кто-то пытался создать аккаунт Tolov с этой почтой, но аккаунт с ней уже есть.\n\nВойти: ${login}\nЗабыли пароль? Задайте новый: ${forgot}\n\nЕсли это были не вы, не обращайте внимания на письмо: ничего не изменилось.`,
    }),
    reset_password: ({ link }) => ({
      subject: 'Новый пароль для Tolov',
      text: `Чтобы задать новый пароль аккаунта Tolov, откройте ссылку в течение 30 минут. Она работает один раз:\n${link}\n\nЕсли включена двухфакторная аутентификация, её код по-прежнему понадобится при входе. Если вы этого не просили, не обращайте внимания на письмо: пароль останется прежним.`,
    }),
    password_changed: ({ email, forgot }) => ({
      subject: 'Пароль Tolov изменён',
      text: `Пароль аккаунта Tolov ${email} изменён, остальные сеансы завершены.\n\nЕсли это были не вы, сразу задайте новый пароль: ${forgot}`,
    }),
    operator_invitation: ({ link, role }) => ({
      subject: 'Приглашение в консоль оператора Tolov',
      text: `Вас приглашают в консоль оператора Tolov, роль: ${ROLES.ru[role]}.\n\nЧтобы задать пароль, откройте ссылку в течение 7 дней. Она работает один раз:\n${link}\n\nЗатем вы настроите двухфакторную аутентификацию: без неё консоль ничего не открывает. Если вы не ждали приглашения, не обращайте внимания на письмо.`,
    }),
  },
  uz: {
    confirm_signup: ({ link, business }) => ({
      subject: 'Tolov akkauntini yakunlash uchun pochtangizni tasdiqlang',
      text: `Kimdir (umid qilamizki, siz) ushbu pochta bilan «${business}» uchun Tolov akkauntini ochishni boshladi.\n\nYakunlash uchun 24 soat ichida ushbu havolani oching:\n${link}\n\nAgar bu siz boʻlmasangiz, xatga eʼtibor bermang: havolasiz akkaunt ochilmaydi.`,
    }),
    invitation: ({ link, account, role }) => ({
      subject: `Tolovda «${account}» jamoasiga taklif`,
      text: `Sizni Tolovdagi «${account}» jamoasiga taklif qilishmoqda, rolingiz: ${ROLES.uz[role]}.\n\nQabul qilish uchun 7 kun ichida ushbu havolani oching:\n${link}\n\nAgar taklifni kutmagan boʻlsangiz, xatga eʼtibor bermang.`,
    }),
    account_exists: ({ login, forgot }) => ({
      subject: 'Sizda Tolov akkaunti allaqachon bor',
      text: `Kimdir ushbu pochta bilan Tolov akkauntini ochishga urindi, lekin bu pochta bilan akkaunt allaqachon bor.\n\nKirish: ${login}\nParolni unutdingizmi? Yangisini oʻrnating: ${forgot}\n\nAgar bu siz boʻlmasangiz, xatga eʼtibor bermang: hech narsa oʻzgarmadi.`,
    }),
    reset_password: ({ link }) => ({
      subject: 'Tolov uchun yangi parol',
      text: `Tolov akkauntingizga yangi parol oʻrnatish uchun ushbu havolani 30 daqiqa ichida oching. U bir marta ishlaydi:\n${link}\n\nIkki bosqichli autentifikatsiya yoqilgan boʻlsa, kirishda uning kodi baribir soʻraladi. Agar buni soʻramagan boʻlsangiz, xatga eʼtibor bermang: parolingiz oʻzgarmaydi.`,
    }),
    password_changed: ({ email, forgot }) => ({
      subject: 'Tolov parolingiz oʻzgartirildi',
      text: `Tolovdagi ${email} akkauntingiz paroli oʻzgartirildi, boshqa seanslar yakunlandi.\n\nAgar bu siz boʻlmasangiz, darhol yangi parol oʻrnating: ${forgot}`,
    }),
    operator_invitation: ({ link, role }) => ({
      subject: 'Tolov operator konsoliga taklif',
      text: `Sizni Tolov operator konsoliga taklif qilishmoqda, rolingiz: ${ROLES.uz[role]}.\n\nParol tanlash uchun 7 kun ichida ushbu havolani oching. U bir marta ishlaydi:\n${link}\n\nSoʻng ikki bosqichli autentifikatsiyani sozlaysiz: usiz konsol hech narsani ochmaydi. Agar taklifni kutmagan boʻlsangiz, xatga eʼtibor bermang.`,
    }),
  },
};

/** Text a stranger chose (a business name), as one line: it cannot lay out the mail it is written into. */
const oneLine = (text: string) => text.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim().slice(0, 100);

export function composeMail(lang: MailLang, mail: AccountMail): { subject: string; text: string } {
  const compose = TEXTS[lang][mail.kind] as (mail: AccountMail) => { subject: string; text: string };
  if (mail.kind === 'confirm_signup') return compose({ ...mail, business: oneLine(mail.business) });
  if (mail.kind === 'invitation') return compose({ ...mail, account: oneLine(mail.account) });
  return compose(mail);
}
