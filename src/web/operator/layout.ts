// The frame of every console page: the dashboard's look and language switch, the operator's bar and the console's
// sections. A console page never shows the merchant dashboard's frame, nor the reverse.
import type { OperatorSession } from '../../modules/operators/service.js';
import type { Dash } from '../dashboard/context.js';
import type { MessageKey } from '../dashboard/i18n.js';
import { csrfField, languages } from '../dashboard/layout.js';
import { html, pageStart, type Html, type Value } from '../html.js';

export type ConsoleSection = 'activations' | 'products' | 'search' | 'checks' | 'audit' | 'operators' | 'entry';

const NAV: Array<{ section: ConsoleSection; href: string; label: MessageKey }> = [
  { section: 'activations', href: '/operator/activations', label: 'navOpActivations' },
  { section: 'products', href: '/operator/products', label: 'navOpProducts' },
  { section: 'search', href: '/operator/search', label: 'navOpSearch' },
  { section: 'checks', href: '/operator/checks', label: 'navOpChecks' },
  { section: 'audit', href: '/operator/audit', label: 'navOpAudit' },
  { section: 'operators', href: '/operator/operators', label: 'navOpOperators' },
];

function operatorBar(dash: Dash, operator: OperatorSession, current: ConsoleSection): Html {
  const { t } = dash;
  const nav = NAV.map((item) => html`<a href="${item.href}"${item.section === current ? html` aria-current="page"` : ''}>${t(item.label)}</a>`);
  return html`<header class="bar">
  <div class="who"><strong>${t('opConsoleName')}</strong><span>${operator.email} · ${t(`opRole_${operator.role}`)}</span></div>
  <form class="logout" method="post" action="/operator/logout">${csrfField(dash)}<button type="submit" class="quiet">${t('logOut')}</button></form>
</header>
${operator.second_factor ? html`<nav class="sections" aria-label="${t('opSections')}">${nav}</nav>` : ''}`;
}

/** A whole console page; `operator` null for the pages before log-in. */
export function consolePage(dash: Dash, operator: OperatorSession | null, options: { title: string; path: string; section?: ConsoleSection; body: Value }): Html {
  return html`${pageStart(dash.lang, `${options.title} · Tolov operators`, 'same-origin')}
<link rel="stylesheet" href="/assets/dashboard.css">
<script type="module" src="/assets/dashboard.js"></script>
</head>
<body data-path="${options.path}">
<div class="top"><a class="brand" href="/operator">Tolov</a>${languages(dash, options.path)}</div>
${operator ? operatorBar(dash, operator, options.section ?? 'entry') : ''}
<main id="main"${operator ? '' : html` class="entry"`}>
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>
`;
}
