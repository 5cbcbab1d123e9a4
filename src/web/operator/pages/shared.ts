// What the console's pages share: how they read the address's query, how they name objects, modes and yes or no, and
// how they list audit entries.
import type { FastifyRequest } from 'fastify';
import type { AuditRow } from '../../../modules/operators/store.js';
import { kindOf } from '../../../modules/support/service.js';
import { DashboardError, type Dash } from '../../dashboard/context.js';
import type { MessageKey } from '../../dashboard/i18n.js';
import { timeElement } from '../../dashboard/layout.js';
import { table, type Column } from '../../dashboard/pages/lists.js';
import { html, type Html } from '../../html.js';

/**
 * A query parameter as text, trimmed; '' when absent. One given twice is refused (400): which of the two was meant
 * cannot be told, and a page of either would be a guess.
 */
export function queryText(request: FastifyRequest, name: string): string {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new DashboardError(400, 'badForm');
  return value.trim();
}

export const yesNo = (dash: Dash, value: boolean) => dash.t(value ? 'opYes' : 'opNo');

export const modeText = (dash: Dash, livemode: boolean) => dash.t(livemode ? 'liveMode' : 'testMode');

const PRODUCT_ID = /^prod_[A-Za-z0-9]{1,60}$/;

/** A product's id, linked to its console page. */
export const productLink = (id: string) => html`<a href="/operator/products/${id}"><code>${id}</code></a>`;

/** An id, linked to its object's page when the search reads its kind (or to its product's), else as code. */
export function objectLink(id: string): Html {
  if (PRODUCT_ID.test(id)) return productLink(id);
  return kindOf(id) === undefined ? html`<code>${id}</code>` : html`<a href="/operator/search/${id}"><code>${id}</code></a>`;
}

type AuditItem = AuditRow & { id: string };

const TARGET_COLUMN: Column<AuditItem> = { label: 'target', cell: (row) => (row.target === null ? '' : objectLink(row.target)) };
const AUDIT_COLUMNS: Column<AuditItem>[] = [
  { label: 'when', cell: (row) => timeElement(row.created_at) },
  // An entry without an operator was made with the operator API's token, which names no one.
  { label: 'who', cell: (row, dash) => (row.operator_id === null ? dash.t('supAuditApiToken') : (row.operator_email ?? row.operator_id)) },
  { label: 'supVia', cell: (row, dash) => dash.t(`supVia_${row.via}`) },
  { label: 'what', cell: (row) => html`<code>${row.action}</code>` },
  TARGET_COLUMN,
  { label: 'supDetail', cell: (row) => row.detail ?? '' },
];

/**
 * Audit entries as a table, newest first as given. `ofOneTarget` when every entry is about the same object (a product's
 * page, the log narrowed to one target): its column would repeat it on every row, and is left out.
 */
export function auditTable(dash: Dash, rows: AuditRow[], caption: MessageKey, ofOneTarget: boolean): Html {
  const columns = ofOneTarget ? AUDIT_COLUMNS.filter((column) => column !== TARGET_COLUMN) : AUDIT_COLUMNS;
  return table(dash, { columns, caption }, rows.map((row) => ({ ...row, id: row.seq })), null);
}
