// What buyers see of the account's product on the hosted pages: the name, the colour of buttons and links, the logo.
// Everyone on the team sees it; owners change it. The logo comes as a file of a multipart form, checked as the
// operator API checks it (its first bytes say its type).
import type { FastifyInstance } from 'fastify';
import { valueOf } from '../../../core/commands.js';
import { ApiError } from '../../../core/errors.js';
import { BRAND_COLOR_PATTERN, DISPLAY_NAME_MAX, LOGO_MAX_BYTES, logoOfBytes, type Branding, type BrandingChange } from '../../../modules/products/branding.js';
import { accentOf, TOLOV_ACCENT } from '../../brand-colors.js';
import { formatAmount, textsFor } from '../../assets/i18n.js';
import { dashOf, field, invocationOf, MANAGES_BRAND, requireRole, ROUTE, signedIn, type Dash, type Signed } from '../context.js';
import { html, type Html } from '../../html.js';
import type { MessageKey } from '../i18n.js';
import { csrfField, notice, page, sendPage } from '../layout.js';
import type { DashboardDeps } from '../deps.js';

const PATH = '/dashboard/branding';
const BRAND_COLOR = new RegExp(BRAND_COLOR_PATTERN);
const LOGO_KIB = LOGO_MAX_BYTES / 1024;
/** The amount on the sample pay button, which says what a buyer's says, in the page's language. */
const SAMPLE_AMOUNT = 1_500_000;

/** The hosted page's header and its pay button, drawn with the branding (an SVG: the page's CSP allows no inline style). */
function preview(dash: Dash, signed: Signed, branding: Branding): Html {
  const { t } = dash;
  const name = branding.displayName ?? signed.product.name;
  const colour = branding.brandColor ?? TOLOV_ACCENT;
  const { ink } = accentOf(colour.slice(1));
  const texts = textsFor(dash.lang);
  const logo = branding.logoDigest
    ? html`<img class="logo" src="/brand/logos/${branding.logoDigest}" alt="${t('logoOf', { name })}">`
    : html`<span class="brand">Tolov</span>`;
  return html`<section class="card" aria-labelledby="preview-title"><h2 id="preview-title">${t('whatBuyersSee')}</h2>
  <div class="brand-preview" id="brand-preview">${logo}<p>${texts.forMerchant(name)}</p>
    <svg class="sample-button" width="280" height="48" viewBox="0 0 280 48" role="img" aria-label="${t('buttonInColour', { colour })}">
      <rect width="280" height="48" rx="8" fill="${colour}"/>
      <text x="140" y="30" text-anchor="middle" fill="${ink}" font-weight="600" font-size="16">${texts.payButton(formatAmount(SAMPLE_AMOUNT, dash.lang))}</text>
    </svg>
  </div>
  <p class="hint">${t('previewHint')}</p></section>`;
}

function brandingForm(dash: Dash, signed: Signed, branding: Branding): Html {
  const { t } = dash;
  const logoChoice = branding.logoDigest ? html`<label class="check"><input type="checkbox" name="removeLogo" value="1"> ${t('removeLogo')}</label>` : '';
  return html`<form class="card" method="post" action="${PATH}" enctype="multipart/form-data">${csrfField(dash)}
  <h2>${t('changeBranding')}</h2>
  <label for="display-name">${t('displayName')}</label>
  <input id="display-name" name="displayName" maxlength="${DISPLAY_NAME_MAX}" value="${branding.displayName ?? ''}" placeholder="${signed.product.name}" aria-describedby="display-name-hint">
  <p class="hint" id="display-name-hint">${t('displayNameHint', { name: signed.product.name })}</p>
  <label for="brand-colour">${t('brandColour')}</label>
  <input id="brand-colour" name="brandColor" type="color" value="${branding.brandColor ?? TOLOV_ACCENT}" data-unticks="tolov-colour">
  <label class="check"><input type="checkbox" id="tolov-colour" name="tolovColour" value="1"${branding.brandColor === null ? html` checked` : ''}> ${t('useTolovColour')}</label>
  <label for="logo">${t('logo')}</label>
  <input id="logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp" aria-describedby="logo-hint">
  <p class="hint" id="logo-hint">${t('logoHint', { kib: LOGO_KIB })}</p>
  ${logoChoice}
  <button type="submit" class="primary">${t('saveBranding')}</button>
</form>`;
}

function brandingPage(dash: Dash, signed: Signed, branding: Branding, said: { error?: string; done?: string } = {}): Html {
  const { t } = dash;
  const body = html`${notice('error', said.error)}${notice('ok', said.done)}
<p>${t('brandingIntro')}</p>
${preview(dash, signed, branding)}
${MANAGES_BRAND.includes(signed.session.role) ? brandingForm(dash, signed, branding) : html`<p class="hint">${t('brandingOwnersOnly')}</p>`}`;
  return page(dash, { title: t('navBranding'), path: PATH, section: 'branding', body });
}

/** A form's answer that the page says in the user's language. */
class Refusal extends Error {
  constructor(readonly key: MessageKey) {
    super(key);
  }
}

/** The change a posted form asks for: an empty name is the account's name; no file keeps the logo. */
function changeOf(form: Record<string, unknown>): BrandingChange {
  const displayName = field(form as Record<string, string>, 'displayName');
  if (displayName.length > DISPLAY_NAME_MAX) throw new Refusal('displayNameTooLong');
  const colour = field(form as Record<string, string>, 'brandColor');
  const useTolov = form.tolovColour !== undefined;
  if (!useTolov && !BRAND_COLOR.test(colour)) throw new Refusal('colourInvalid');
  const change: BrandingChange = { displayName: displayName || null, brandColor: useTolov ? null : colour };
  // A file input left empty still sends a part, with no bytes.
  const file = form.logo;
  if (Buffer.isBuffer(file) && file.length > 0) {
    try {
      change.logo = logoOfBytes(file);
    } catch (error) {
      if (error instanceof ApiError) throw new Refusal('logoRefused');
      throw error;
    }
  } else if (form.removeLogo !== undefined) {
    change.logo = null;
  }
  return change;
}

export function brandingPages(app: FastifyInstance, { products }: DashboardDeps): void {
  app.get<{ Querystring: { done?: string } }>('/branding', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const dash = dashOf(request);
    const done = request.query.done === 'saved' ? dash.t('brandingSaved') : undefined;
    return sendPage(reply, brandingPage(dash, signed, await products.branding(signed.product.id), { done }));
  });

  app.post<{ Body: Record<string, unknown> }>('/branding', ROUTE, async (request, reply) => {
    const signed = signedIn(request);
    const dash = dashOf(request);
    requireRole(signed, MANAGES_BRAND);
    let change: BrandingChange;
    try {
      change = changeOf(request.body ?? {});
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const branding = await products.branding(signed.product.id);
      return sendPage(reply, brandingPage(dash, signed, branding, { error: dash.t(error.key, { kib: LOGO_KIB }) }), 400);
    }
    valueOf(await products.brand(invocationOf(request, signed, { branding: signed.product.id }), change));
    return reply.redirect(`${PATH}?done=saved`, 303);
  });
}
