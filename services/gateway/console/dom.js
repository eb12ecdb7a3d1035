// Building the page from data without innerHTML: every value is a text node, so nothing the API
// returns can run as markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '—');
export const timeEl = (iso) => (iso ? h('time', { datetime: iso }, when(iso)) : '—');

/** A table with a caption, column headers and one row per item. */
export function table(caption, columns, rows, empty = 'Nothing to show.') {
  if (rows.length === 0) return h('p', {}, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    // Explicit roles: at a phone's width the stylesheet lays each row out as a card (display: block),
    // which would otherwise drop the table's semantics for screen readers; data-label names each cell there.
    h(
      'table',
      { role: 'table' },
      h('caption', {}, caption),
      h('thead', { role: 'rowgroup' }, h('tr', { role: 'row' }, columns.map((c) => h('th', { scope: 'col', role: 'columnheader' }, c.label)))),
      h('tbody', { role: 'rowgroup' }, rows.map((row) => h('tr', { role: 'row' }, columns.map((c, i) =>
        i === 0
          ? h('th', { scope: 'row', role: 'rowheader', 'data-label': c.label }, c.cell(row))
          : h('td', { role: 'cell', class: c.num ? 'num' : undefined, 'data-label': c.label }, c.cell(row)))))),
    ),
  );
}

/** Key/value facts. */
export const facts = (pairs) => h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));

export const json = (value) => h('pre', {}, h('code', {}, JSON.stringify(value, null, 2)));

/**
 * A GET form of filters: each field named and labelled as the API's parameter reads; submitting
 * navigates to the page with those parameters (so a filtered view has its own URL).
 */
export function filters(fields, values) {
  const form = h('form', { class: 'filters', method: 'get', role: 'search', 'aria-label': 'Filters' });
  for (const f of fields) {
    const id = `f-${f.name}`;
    const control =
      f.options
        ? h('select', { id, name: f.name }, h('option', { value: '' }, 'Any'), f.options.map((o) => h('option', { value: o, selected: values.get(f.name) === o }, o)))
        : h('input', { id, name: f.name, type: 'text', value: values.get(f.name) ?? '', placeholder: f.placeholder, autocomplete: 'off', spellcheck: 'false' });
    form.append(h('div', {}, h('label', { for: id }, f.label), control));
  }
  form.append(h('div', {}, h('button', { type: 'submit' }, 'Apply filters')));
  return form;
}

export function nextLink(nextCursor, values) {
  if (!nextCursor) return null;
  const q = new URLSearchParams(values);
  q.set('cursor', nextCursor);
  return h('p', {}, h('a', { href: `?${q}` }, 'Next page'));
}
