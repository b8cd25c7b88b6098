// mcpdiag's page over diagnostic records (docs/ui.md). One module, no
// dependencies, nothing fetched but the page's own event stream (live mode).
// The records are shown as they were recorded (already redacted); the page
// never rewrites them.

const $ = (id) => document.getElementById(id);
const cfg = JSON.parse($('mcpdiag-config').textContent);
const META = cfg.meta;
const OUTCOMES = new Map(META.outcomes.map((o) => [o.name, o]));
const ROW_H = 24;      // every row's height in px (app.css .list tr)
const OVERSCAN = 30;   // rows rendered above and below the visible ones
const SVG = 'http://www.w3.org/2000/svg';

// ---- helpers ---------------------------------------------------------------

// visible is Go's internal/visible Lines for the page: every text the page
// shows (and every title) is rendered with it, so that a bidi override, a
// zero-width or a control character a peer sent is shown as an escape
// (\u202e, \x1b, \r) rather than reordering or hiding the text around it.
// Newlines and tabs stay (bodies are shown as lines); a backslash is
// doubled where it would read as an escape, so no two texts look the same.
const ESCAPED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\uFFFE\uFFFF]/u;
const NEEDS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\uFFFE\uFFFF\\]/u;
function escapedChar(c) { return c !== '\n' && c !== '\t' && ESCAPED.test(c); }
export function visible(v) {
  const str = String(v);
  if (!NEEDS.test(str)) return str;
  const cs = Array.from(str);
  let out = '';
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i];
    if (c === '\\') {
      const n = cs[i + 1];
      out += n !== undefined && ('\\tnrxuU'.includes(n) || escapedChar(n)) ? '\\\\' : '\\';
    } else if (escapedChar(c)) {
      const cp = c.codePointAt(0);
      if (c === '\r') out += '\\r';
      else if (cp < 0x80) out += '\\x' + cp.toString(16).padStart(2, '0');
      else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0');
      else out += '\\U' + cp.toString(16).padStart(8, '0');
    } else out += c;
  }
  return out;
}

// shownAttr: attributes a person reads (a tooltip, a label).
const shownAttr = new Set(['title', 'aria-label', 'alt', 'placeholder']);

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = visible(v);
    else el.setAttribute(k, v === true ? '' : shownAttr.has(k) ? visible(v) : String(v));
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    el.append(k instanceof Node ? k : visible(k));
  }
  return el;
}

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'text') el.textContent = visible(v);
    else el.setAttribute(k, shownAttr.has(k) ? visible(v) : String(v));
  }
  for (const k of kids.flat()) if (k) el.append(k);
  return el;
}

export function layerOf(r) {
  if (r.layer) return r.layer;
  const o = OUTCOMES.get(r.outcome);
  return o ? o.layer : '';
}

// failure is report.Failure: successes, TASK_CREATED and NOT_CLASSIFIED are
// not failures; INPUT_REQUIRED is one on a call only; no outcome is none.
export function isFailure(r) {
  if (!r.outcome) return false;
  // A probe mcpdiag probe sent on purpose: its answer (an error to a
  // deliberate bad call, most of them) is judged by the probe's rules, not
  // a failure (as in mcpdiag report).
  if (r.probe) return false;
  // The client's refused 2026-07-28 probe after which it fell back to
  // initialize (eraFallback with the decision renegotiate): a negotiation
  // step, counted apart by mcpdiag report, not a failure.
  if (r.eraFallback && r.kind === 'exchange' && r.decision && r.decision.action === 'renegotiate') return false;
  // One mcpdiag report links to its client's initialize when it reads the
  // records (a proxy's records carry no eraFallback): the page is told
  // which (markEraFallback).
  if (r._eraFallback) return false;
  // A record of a matrix run or a call an interrupt cut short (the warning
  // matrix-run-interrupted or call-interrupted): not judged, counted apart
  // by mcpdiag report as interrupted, not a failure (its NETWORK_ERROR is
  // the stop's cut).
  if (isInterrupted(r)) return false;
  // An exchange the recording proxy's or server's own shutdown cut (the
  // flag SD): the user's stop, counted apart by mcpdiag report as cut by
  // shutdown, not a failure of the server.
  if (isCutByShutdown(r)) return false;
  // An authorization challenge (401/403) the client answered with a token
  // and a re-sent request: a step of the spec's authorization flow,
  // counted apart by mcpdiag report, not a failure.
  if (isChallengeAnswered(r)) return false;
  // A challenge in a proxy's or server's records (401, or 403
  // insufficient_scope, with a Bearer challenge) mcpdiag report linked to
  // the client's next such request, which carried a new token and was not
  // refused: the page is told which (markChallenge).
  if (r._answeredBy) return false;
  // An answer the spec designs to a request that is no JSON-RPC message (a
  // GET or DELETE answered 405, a GET answered 3xx): counted apart by
  // mcpdiag report as a designed answer, not a failure.
  if (designedAnswer(r)) return false;
  // A request whose stream the server closed before its response, which
  // came on the GET that resumed the stream: mcpdiag report counts it by
  // that response's outcome (markResume).
  if (r._resumedBy) return outcomeFailure(r._resumedOutcome, r.kind);
  // A 2024-11-05 HTTP+SSE request accepted 202 whose answer never came on
  // the GET stream: unanswered, a failure as in mcpdiag report, though its
  // outcome (REQUEST_ACCEPTED) is not one (one the shutdown cut is
  // isCutByShutdown's, above).
  if (unansweredOnStream(r)) return true;
  return outcomeFailure(r.outcome, r.kind);
}

// outcomeFailure is report.Failure: whether outcome counts as a failure on
// a record of kind.
function outcomeFailure(outcome, kind) {
  const o = OUTCOMES.get(outcome);
  if (!o) return true;
  if (o.notFailure) return false;
  if (outcome === 'INPUT_REQUIRED') return kind === 'call';
  return true;
}

// isInterrupted is report's obs.interrupted: the record carries one of the
// warnings record.InterruptedWarnings (META.interrupted), a typed fact.
export function isInterrupted(r) {
  return (r.warnings || []).some((w) => META.interrupted.includes(w.code));
}

// isChallengeAnswered is report's obs.challenge
// (record.Record.ChallengeAnswered): typed facts, the auth step and the
// decision's action (META.challenge).
export function isChallengeAnswered(r) {
  return r.kind === 'exchange' && Boolean(r.auth) && r.auth.step === META.challenge.step &&
    Boolean(r.decision) && r.decision.action === META.challenge.action;
}

// designedAnswer is record.Record.DesignedAnswer (report's obs.designed):
// the reason an exchange of a request that is no JSON-RPC message got an
// answer the spec designs, or '' (META.designed: the outcome and the
// rules, from Go).
export function designedAnswer(r) {
  const d = META.designed;
  if (!d || r.kind !== 'exchange' || r.outcome !== d.outcome || r.method || r.clientAnswer || r.batch) return '';
  const id = r.jsonrpc ? r.jsonrpc.id : null;
  if (id !== null && id !== undefined) return '';
  const rule = (d.rules || []).find((x) => r.httpMethod === x.httpMethod && r.status >= x.statusMin && r.status <= x.statusMax);
  return rule ? rule.reason : '';
}

// isCutByShutdown is report's obs.shutdown: the record carries the flag
// record.FlagSD (META.cutByShutdown), a typed fact, and an outcome the cut
// made (META.cutOutcomes; another is the server's own failure, judged);
// one an interrupt's warning marks is counted as interrupted instead, as
// report does.
export function isCutByShutdown(r) {
  return ((r.flags || []).includes(META.cutByShutdown) && (META.cutOutcomes || []).includes(r.outcome) ||
    unansweredOnStream(r) === META.unanswered.shutdown) && !isInterrupted(r);
}

// unansweredOnStream is record.Record.UnansweredOnStream: why the answer
// of a 2024-11-05 HTTP+SSE request accepted 202 (REQUEST_ACCEPTED with a
// streamAnswer) never came on the GET stream (META.unanswered.unknown when
// the record does not say), or ''.
export function unansweredOnStream(r) {
  const a = r.streamAnswer;
  if (r.kind !== 'exchange' || r.outcome !== META.unanswered.outcome || !a || a.seen) return '';
  return a.notSeen || META.unanswered.unknown;
}

function fmtTime(t) {
  if (!t) return '';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}`;
}

function fmtMs(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms >= 1000) return (ms / 1000).toFixed(ms >= 10000 ? 1 : 2) + ' s';
  return (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)) + ' ms';
}

function fmtBytes(n) {
  if (!n) return '';
  if (n < 1000) return n + ' B';
  if (n < 1e6) return (n / 1000).toFixed(1) + ' kB';
  return (n / 1e6).toFixed(1) + ' MB';
}

// idText shows a JSON-RPC id as the record wrote it: src is the number's
// source text where parseRecord kept it (9007199254740993, 7.0 and -0 are
// not what the parsed number prints).
function idText(id, src) {
  if (id === undefined || id === null) return 'null';
  return typeof id === 'number' && src !== undefined ? src : JSON.stringify(id);
}

// parseRecord reads one record line. It keeps the line (_line, shown as
// "The record as JSON") and the source text of each number under "id" or
// "responseId" (_idSource, _responseIdSource: a JSON-RPC id past 2^53 or
// written 7.0 is not the number JavaScript parses; where the browser gives
// a reviver no source text, the parsed number is shown). Both are not
// enumerable: they stay out of the search text.
function parseRecord(line) {
  const r = JSON.parse(line, function (k, v, ctx) {
    if ((k === 'id' || k === 'responseId') && typeof v === 'number' && ctx && typeof ctx.source === 'string') {
      Object.defineProperty(this, '_' + k + 'Source', { value: ctx.source });
    }
    return v;
  });
  if (r && typeof r === 'object') Object.defineProperty(r, '_line', { value: line });
  return r;
}

// indentJSON indents JSON text two spaces a level without parsing it, so
// that every number and string reads as it was written.
function indentJSON(text) {
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] || '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    const close = c === '}' || c === ']';
    if ((c === '{' || c === '[') && (text[i + 1] === '}' || text[i + 1] === ']')) {
      out += c + text[++i];
      continue;
    }
    if (close) out += '\n' + '  '.repeat(--depth);
    out += c;
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') out += '\n' + '  '.repeat(++depth);
    else if (c === ',') out += '\n' + '  '.repeat(depth);
    else if (c === ':') out += ' ';
  }
  return out;
}

// ---- the model -------------------------------------------------------------

const model = {
  records: [],           // every record, in arrival order
  groups: new Map(),     // group key -> group
  order: [],             // groups, first seen first
  facets: { layer: new Set(), outcome: new Set(), tool: new Set(), method: new Set(), kind: new Set() },
  dropped: 0,
  late: 0,               // records marked matrix-line-late (isLate)
  interrupted: 0,        // records of interrupted runs and calls (isInterrupted)
  cutByShutdown: 0,      // exchanges the proxy's or server's shutdown cut (isCutByShutdown)
  designed: 0,           // designed answers to requests that are no JSON-RPC message (designedAnswer)
  challenges: 0,         // authorization challenges the client answered (challengeApart)
};

// The call and exchange records without an outcome that mcpdiag report left
// out of a static page (a producer's bug, or a record cut or written by
// hand), named by file and line as report names them on stderr.
const leftOut = jsonValue('mcpdiag-left-out');

function leftOutText() {
  if (!leftOut || !leftOut.records) return '';
  const named = (leftOut.named || []).map((b) => `${b.file}:${b.line} (${b.kind})`).join(', ');
  const more = leftOut.records > (leftOut.named || []).length ? ` and ${leftOut.records - leftOut.named.length} more` : '';
  return ` · ${leftOut.records} left out, without an outcome (counted apart by mcpdiag report): ${named}${more}`;
}

function groupKey(r) {
  if (r.kind === 'call') return r.id;
  return r.callId || null;
}

// olderHTTPSuccess is mcpdiag report's (report/accumulate.go): an exchange
// record of an mcpdiag before 2026-12-06 said RESULT_SUCCESS (application
// layer) for an exchange that is not a JSON-RPC request (a GET, a DELETE, a
// POST without a JSON-RPC method that is not a client's answer, nor an
// OAuth chain's step, which the client records RESULT_SUCCESS); report
// counts it HTTP_SUCCESS in the transport layer, as this version records
// it, and so does the page.
function olderHTTPSuccess(r) {
  if (r.kind !== 'exchange' || r.outcome !== 'RESULT_SUCCESS' || !r.httpMethod || r.auth) return false;
  return r.httpMethod !== 'POST' || (!r.method && !r.clientAnswer);
}

function addRecord(r) {
  if (!r || typeof r !== 'object' || Array.isArray(r)) return;
  if (olderHTTPSuccess(r)) {
    r.outcome = 'HTTP_SUCCESS';
    r.layer = 'transport';
    Object.defineProperty(r, '_rejudged', { value: true });
  }
  r._i = model.records.length;
  r._seen = Date.now(); // when the page took it (the browser tests measure the delay)
  if (r.id && eraFallbacks.has(r.id)) r._eraFallback = true;
  if (r.id && challengeLinks.has(r.id)) r._answeredBy = challengeLinks.get(r.id);
  if (r.id && resumeLinks.has(r.id)) setResumed(r, resumeLinks.get(r.id));
  model.records.push(r);
  const key = groupKey(r) || '#' + r._i;
  let g = model.groups.get(key);
  if (!g) {
    g = { key, call: null, items: [], grouped: false, collapsed: false };
    model.groups.set(key, g);
    model.order.push(g);
  }
  if (r.kind === 'call') g.call = r;
  else {
    g.items.push(r);
    // Exchanges can be written out of order (a proxy records each as it
    // ends): keep a call's exchanges by seq.
    for (let i = g.items.length - 1; i > 0 && (g.items[i - 1].seq || 0) > (g.items[i].seq || 0); i--) {
      [g.items[i - 1], g.items[i]] = [g.items[i], g.items[i - 1]];
    }
  }
  g.grouped = g.call !== null || g.items.length > 1 || Boolean(g.items[0] && g.items[0].callId);
  const f = model.facets;
  const layer = layerOf(r);
  if (layer) f.layer.add(layer);
  if (r.outcome) f.outcome.add(r.outcome);
  if (r.tool) f.tool.add(r.tool);
  if (r.method) f.method.add(r.method);
  if (r.kind) f.kind.add(r.kind);
  if (r.kind === 'dropped') model.dropped += r.dropped || 0;
  if (isLate(r)) model.late++;
  if (isInterrupted(r)) model.interrupted++;
  if (isCutByShutdown(r)) model.cutByShutdown++;
  if (designedApart(r)) model.designed++;
  if (challengeApart(r)) model.challenges++;
}

// challengeApart: an answered challenge report counts as one (the client
// marked it, or report linked it to the client's answer), when no earlier
// reason counts it apart (report's apart order: probe, era fallback,
// interrupted, cut by shutdown, then the challenge).
function challengeApart(r) {
  if (!isChallengeAnswered(r) && !r._answeredBy) return false;
  if (isInterrupted(r) || isCutByShutdown(r)) return false;
  return !r.probe && !(r.eraFallback && r.decision && r.decision.action === 'renegotiate') && !r._eraFallback;
}

// designedApart: a designed answer report counts as one (no earlier
// reason counts it apart: report's apart order).
function designedApart(r) {
  if (!designedAnswer(r) || isInterrupted(r) || isCutByShutdown(r) || isChallengeAnswered(r) || r._answeredBy) return false;
  return !r.probe && !(r.eraFallback && r.decision && r.decision.action === 'renegotiate') && !r._eraFallback;
}

// Era fallbacks mcpdiag report linked (see isFailure), by record id: a
// mark may come before its record (a page that opened late gets both
// again, in order, but a record can be forgotten) or after it.
const eraFallbacks = new Set();

function markEraFallback(id) {
  if (typeof id !== 'string' || !id) return;
  eraFallbacks.add(id);
  for (let i = model.records.length - 1; i >= 0; i--) {
    if (model.records[i].id === id) { model.records[i]._eraFallback = true; break; }
  }
}

// Challenges mcpdiag report linked to their client's answer (see
// isFailure): record id -> the id of the exchange that answered it; as an
// era fallback's, a mark may come before its record or after it.
const challengeLinks = new Map();

function markChallenge(l) {
  if (!l || typeof l.id !== 'string' || !l.id || typeof l.answeredBy !== 'string') return;
  challengeLinks.set(l.id, l.answeredBy);
  for (let i = model.records.length - 1; i >= 0; i--) {
    const r = model.records[i];
    if (r.id !== l.id) continue;
    if (!r._answeredBy) {
      const before = challengeApart(r);
      r._answeredBy = l.answeredBy;
      if (!before && challengeApart(r)) model.challenges++;
    }
    break;
  }
}

// Requests mcpdiag report counted by the response on the GET that resumed
// their stream (see isFailure): record id -> its report.ResumeLink; as a
// challenge's, a mark may come before its record or after it.
const resumeLinks = new Map();

function setResumed(r, l) {
  Object.defineProperty(r, '_resumedBy', { value: l.resumedBy, configurable: true });
  Object.defineProperty(r, '_resumedOutcome', { value: l.outcome, configurable: true });
}

function markResume(l) {
  if (!l || typeof l.id !== 'string' || !l.id || typeof l.resumedBy !== 'string' || typeof l.outcome !== 'string') return;
  resumeLinks.set(l.id, l);
  for (let i = model.records.length - 1; i >= 0; i--) {
    if (model.records[i].id === l.id) { setResumed(model.records[i], l); break; }
  }
}

function clearModel() {
  model.records = [];
  model.groups = new Map();
  model.order = [];
  model.dropped = 0;
  model.late = 0;
  model.interrupted = 0;
  model.cutByShutdown = 0;
  model.designed = 0;
  model.challenges = 0;
  for (const k of Object.keys(model.facets)) model.facets[k] = new Set();
}

// ---- filters ---------------------------------------------------------------

const filterIds = ['layer', 'outcome', 'tool', 'method', 'kind'];
const filter = { layer: '', outcome: '', tool: '', method: '', kind: '', text: '' };

function textOf(r) {
  if (r._text === undefined) {
    const { _i, _text, _seen, ...plain } = r;
    r._text = JSON.stringify(plain).toLowerCase();
  }
  return r._text;
}

export function matches(r) {
  if (filter.layer && layerOf(r) !== filter.layer) return false;
  if (filter.outcome && r.outcome !== filter.outcome) return false;
  if (filter.tool && r.tool !== filter.tool) return false;
  if (filter.method && r.method !== filter.method) return false;
  if (filter.kind && r.kind !== filter.kind) return false;
  if (filter.text && !textOf(r).includes(filter.text)) return false;
  return true;
}

function refreshFacets() {
  for (const k of filterIds) {
    const sel = $('f-' + k);
    const have = new Set([...sel.options].map((o) => o.value));
    const values = [...model.facets[k]].sort();
    if (values.length + 1 === have.size && values.every((v) => have.has(v))) continue;
    const cur = sel.value;
    sel.replaceChildren(h('option', { value: '' }, 'all'), ...values.map((v) => h('option', { value: v }, v)));
    sel.value = values.includes(cur) ? cur : '';
    if (sel.value !== cur) filter[k] = '';
  }
}

// ---- the table (virtualized: only the rows in view are in the DOM) ---------

let view = [];           // the visible rows: {rec, group, child} or {group, synthetic}
let selected = null;     // the selected record
let viewDirty = true;

function flatten() {
  const out = [];
  for (const g of model.order) {
    const items = g.items.filter(matches);
    const callShown = g.call !== null && matches(g.call);
    if (!callShown && items.length === 0) continue;
    if (!g.grouped) {
      out.push({ rec: items[0], group: g });
      continue;
    }
    out.push(callShown ? { rec: g.call, group: g, header: true } : { group: g, synthetic: true, header: true });
    if (!g.collapsed) for (const r of items) out.push({ rec: r, group: g, child: true });
  }
  return out;
}

function cell(cls, text, title) {
  return h('td', { class: cls, title: title || undefined }, text === undefined || text === null ? '' : String(text));
}

function rowFor(v, index) {
  if (v.synthetic) {
    const g = v.group;
    const n = g.items.length;
    const tr = h('tr', { class: 'row header synthetic', 'data-index': index, 'data-group': g.key },
      h('td', { colspan: 11, class: 'c-group' },
        h('span', { class: 'fold', 'aria-hidden': 'true' }, g.collapsed ? '▸' : '▾'),
        g.call ? `call ${g.key} (its call line does not match the filter)` :
          `call ${g.key}: ${n} exchange${n === 1 ? '' : 's'}, no call line (yet)`));
    return tr;
  }
  const r = v.rec;
  const layer = layerOf(r);
  const cls = ['row', 'kind-' + (r.kind || 'none')];
  if (v.header) cls.push('header');
  if (v.child) cls.push('child');
  if (isFailure(r)) cls.push('fail');
  if (isLate(r)) cls.push('late');
  if (isInterrupted(r) || isCutByShutdown(r)) cls.push('interrupted');
  if (selected === r) cls.push('selected');
  const outcome = r.outcome ? h('span', { class: 'badge layer-' + (layer || 'unknown'), title: r.reason || undefined }, r.outcome) : '';
  const tr = h('tr', {
    id: 'rec-' + r._i, class: cls.join(' '), 'data-id': r.id || '', 'data-index': index, 'data-layer': layer,
    'aria-selected': selected === r ? 'true' : 'false',
  },
  h('td', { class: 'c-time' }, v.header ? h('span', { class: 'fold', 'aria-hidden': 'true' }, v.group.collapsed ? '▸' : '▾') : '', fmtTime(r.time)),
  cell('c-kind', r.kind),
  cell('c-seq', r.kind === 'call' ? (r.exchanges ? '×' + r.exchanges : '') : (r.seq || '')),
  cell('c-method', r.method || r.httpMethod || ''),
  cell('c-tool', r.tool),
  cell('c-status', r.status ? r.status : ''),
  h('td', { class: 'c-outcome' }, outcome),
  cell('c-layer', layer),
  cell('c-dur', fmtMs(r.timings && r.timings.totalMs)),
  cell('c-size', fmtBytes(r.responseBytes)),
  cell('c-flags', [...(isLate(r) ? ['LATE'] : []), ...(isInterrupted(r) ? ['INTERRUPTED'] : []), ...(r.flags || [])].join(' '),
    [...(isLate(r) ? [`LATE: ${lateWords}`] : []), ...(isInterrupted(r) ? [`INTERRUPTED: ${interruptedWords}`] : []),
      ...(r.flags || []).map((f) => `${f}: ${META.flagDocs[f] || ''}`)].join('\n')));
  return tr;
}

// A matrix server log line logged after its run was judged (matrix --record
// and --html write it with the warning matrix-line-late): shown, marked
// LATE, and under its run in the case's pane; it is in no verdict.
const lateWords = 'the server logged this request after its run was judged: in no verdict';
const interruptedWords = 'of a run or call an interrupt cut short (matrix-run-interrupted, call-interrupted): not judged, not a failure';
function isLate(r) {
  return (r.warnings || []).some((w) => w.code === 'matrix-line-late');
}

const list = $('list');
const tbody = $('rows');

let rendered = { start: 0, end: -1, dirty: true }; // the rows in the DOM
let headH = 0;
window.addEventListener('resize', () => { headH = 0; schedule(false, false); });

function render() {
  if (viewDirty) rendered.dirty = true;
  if (viewDirty) {
    view = flatten();
    viewDirty = false;
    const shown = view.filter((v) => v.rec).length;
    $('count').textContent = `${shown} of ${model.records.length} records` +
      (model.dropped ? ` · the producer dropped ${model.dropped}` : '') +
      (model.interrupted ? ` · ${model.interrupted} of interrupted runs (incomplete; not failures)` : '') +
      (model.cutByShutdown ? ` · ${model.cutByShutdown} cut by shutdown (the proxy's or server's own; incomplete; not failures)` : '') +
      (model.challenges ? ` · ${model.challenges} ${model.challenges === 1 ? 'auth challenge' : 'auth challenges'} answered (401/403 the client answered with a new token; not failures)` : '') +
      (model.designed ? ` · ${model.designed} designed ${model.designed === 1 ? 'answer' : 'answers'} (405 to a GET or DELETE, 3xx to a GET; not failures)` : '') +
      leftOutText();
  }
  if (!headH) headH = $('table').tHead.offsetHeight;
  const top = Math.max(0, list.scrollTop - headH);
  const height = list.clientHeight || 600;
  const first = Math.floor(top / ROW_H), last = Math.min(view.length, Math.ceil((top + height) / ROW_H));
  // Scrolling within the rows already rendered changes nothing.
  if (!rendered.dirty && first >= rendered.start && last <= rendered.end) return;
  const start = Math.max(0, first - OVERSCAN);
  const end = Math.min(view.length, last + OVERSCAN);
  rendered = { start, end, dirty: false };
  const rows = [];
  if (start > 0) rows.push(h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: 11 })));
  for (let i = start; i < end; i++) rows.push(rowFor(view[i], i));
  if (end < view.length) rows.push(h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: 11 })));
  tbody.replaceChildren(...rows);
  // Screen readers follow the selection in the focused list.
  if (selected && document.getElementById('rec-' + selected._i)) list.setAttribute('aria-activedescendant', 'rec-' + selected._i);
  else list.removeAttribute('aria-activedescendant');
  const spacers = tbody.querySelectorAll('tr.spacer');
  let k = 0;
  if (start > 0) spacers[k++].style.height = start * ROW_H + 'px';
  if (end < view.length) spacers[k].style.height = (view.length - end) * ROW_H + 'px';
}

let frame = 0;
// schedule renders on the next frame: dirty recomputes the visible rows
// (filters, new records, folds); repaint redraws the rendered ones (the
// selection); neither is needed for a scroll.
function schedule(dirty = true, repaint = true) {
  if (dirty) viewDirty = true;
  if (repaint) rendered.dirty = true;
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; render(); });
}

list.addEventListener('scroll', () => schedule(false, false));

tbody.addEventListener('click', (ev) => {
  const tr = ev.target.closest('tr.row');
  if (!tr) return;
  const v = view[Number(tr.dataset.index)];
  if (!v) return;
  if (ev.target.closest('.fold') || v.synthetic) {
    v.group.collapsed = !v.group.collapsed;
    schedule();
    if (v.synthetic) return;
  }
  select(v.rec);
});

function indexOfSelected() {
  return selected ? view.findIndex((v) => v.rec === selected) : -1;
}

function select(r, scroll = false) {
  selected = r;
  showDetail(r);
  if (scroll) {
    const i = indexOfSelected();
    if (i >= 0) {
      if (!headH) headH = $('table').tHead.offsetHeight;
      const y = i * ROW_H;
      if (y < list.scrollTop) list.scrollTop = y;
      else if (y + ROW_H + headH > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW_H + headH - list.clientHeight;
    }
  }
  schedule(false);
}

function move(delta) {
  if (view.length === 0) return;
  let i = indexOfSelected();
  if (i < 0) i = delta > 0 ? -1 : view.length;
  let j = Math.max(0, Math.min(view.length - 1, i + delta));
  // Skip synthetic headers, which are no record.
  const step = delta > 0 ? 1 : -1;
  while (view[j] && !view[j].rec && j + step >= 0 && j + step < view.length) j += step;
  if (view[j] && view[j].rec) select(view[j].rec, true);
}

function fold(collapsed) {
  const i = indexOfSelected();
  if (i < 0) return;
  const g = view[i].group;
  if (!g.grouped) return;
  g.collapsed = collapsed;
  if (collapsed && g.call === null) selected = null;
  if (collapsed && g.call !== null) selected = g.call;
  schedule();
}

document.addEventListener('keydown', (ev) => {
  const inField = ev.target.closest && ev.target.closest('input, select, textarea');
  if (ev.key === 'Escape') {
    if (inField) { ev.target.blur(); list.focus(); return; }
    selected = null;
    showDetail(null);
    schedule(false);
    return;
  }
  if (inField || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const page = Math.max(1, Math.floor(list.clientHeight / ROW_H) - 1);
  const keys = {
    ArrowDown: () => move(1), j: () => move(1), ArrowUp: () => move(-1), k: () => move(-1),
    PageDown: () => move(page), PageUp: () => move(-page),
    Home: () => move(-view.length), End: () => move(view.length),
    ArrowLeft: () => fold(true), ArrowRight: () => fold(false),
    '/': () => $('f-text').focus(), p: () => togglePause(),
  };
  const fn = keys[ev.key];
  if (fn) { ev.preventDefault(); fn(); }
});

// ---- the detail pane -------------------------------------------------------

function kv(pairs) {
  const dl = h('dl', { class: 'kv' });
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    dl.append(h('dt', {}, k), h('dd', {}, v instanceof Node ? v : String(v)));
  }
  return dl;
}

function section(title, ...body) {
  const kids = body.flat().filter(Boolean);
  if (kids.length === 0) return null;
  return h('section', { class: 'sec', 'data-section': title.toLowerCase().replace(/[^a-z]+/g, '-') }, h('h3', {}, title), ...kids);
}

function headersTable(hd) {
  if (!hd || Object.keys(hd).length === 0) return null;
  const t = h('table', { class: 'headers' });
  for (const name of Object.keys(hd).sort()) {
    for (const v of [].concat(hd[name])) t.append(h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, v)));
  }
  return t;
}

function bodyBlock(b, label) {
  if (!b) return null;
  return h('div', { class: 'body' },
    h('pre', { class: 'body-text', 'aria-label': label }, b.text),
    b.truncated ? h('p', { class: 'note' }, 'cut to the recording limit (truncated)') : null);
}

// cutOf says how a response was cut, "" when it was not.
export function cutOf(r) {
  const f = r.flags || [];
  const sse = r.sse;
  if (f.includes('UR')) return 'the upstream cut the response after it started (UR)';
  if (f.includes('AB')) return 'the handler aborted the response mid-body (AB)';
  if (f.includes('DC')) return 'the client disconnected before the end of the response (DC)';
  if (r.network && r.network.phase === 'body') return 'the body failed: ' + r.network.error;
  if (sse && !sse.terminal && sse.end && !sse.end.startsWith('stopped-at')) return 'the stream ended before its response (' + sse.end + ')';
  if (sse && sse.unterminated) return 'the last event has no blank line: it was never delivered';
  return '';
}

function sseTimeline(r) {
  const sse = r.sse;
  const arr = r.sseArrivals || [];
  if (!sse && arr.length === 0) return null;
  const total = (r.timings && r.timings.totalMs) || 0;
  const cut = cutOf(r);
  const out = [];
  const terminal = sse && sse.terminal ? sse.terminalEvent || 0 : 0;
  out.push(kv([
    ['events', sse ? sse.events : arr.length],
    ['notifications', sse && sse.notifications], ['progress', sse && sse.progress],
    ['server requests', sse && sse.requests], ['comments', sse && sse.comments],
    ['terminal', terminal ? `event ${terminal}` : 'none (the response never arrived on this stream)'],
    ['after terminal', sse && sse.afterTerminal], ['skipped', sse && sse.skipped],
    ['ended', sse && sse.end], ['cut', cut || 'no'],
  ]));
  if (arr.length === 0) {
    out.push(h('p', { class: 'note' }, 'No arrival times in this record (the proxy records them with --record-bodies full).'));
    if (cut) out.push(h('p', { class: 'cut-text sse-cut' }, 'cut: ' + cut));
    return out;
  }
  const W = 640, H = 64, P = 24;
  const maxT = Math.max(total, ...arr.map((a) => a[1]), 0.001);
  const x = (t) => P + ((W - 2 * P) * t) / maxT;
  const svg = s('svg', { class: 'timeline', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `SSE timeline: ${arr.length} events over ${fmtMs(maxT)}${cut ? ', cut' : ''}` },
    s('line', { class: 'axis', x1: P, x2: W - P, y1: 40, y2: 40 }),
    s('text', { class: 'tick', x: P, y: 58, 'text-anchor': 'start', text: '0' }),
    s('text', { class: 'tick', x: W - P, y: 58, 'text-anchor': 'end', text: fmtMs(maxT) }));
  arr.forEach(([end, ms], i) => {
    const n = i + 1;
    let cls = 'sse-event';
    if (n === terminal) cls += ' sse-terminal';
    else if (terminal && n > terminal) cls += ' sse-after';
    const g = s('g', { class: cls, 'data-event': n },
      s('title', { text: `event ${n} at ${fmtMs(ms)}, ends at byte ${end}${n === terminal ? ' (terminal: the response)' : ''}` }),
      s('line', { x1: x(ms), x2: x(ms), y1: n === terminal ? 8 : 20, y2: 40 }),
      s('circle', { cx: x(ms), cy: n === terminal ? 8 : 20, r: n === terminal ? 6 : 4 }));
    if (n === terminal) g.append(s('text', { class: 'label', x: x(ms) + 8, y: 12, text: 'terminal' }));
    svg.append(g);
  });
  if (cut) {
    const cx = x(total || arr[arr.length - 1][1]);
    svg.append(s('g', { class: 'sse-cut' },
      s('title', { text: 'cut: ' + cut }),
      s('line', { x1: cx, x2: cx, y1: 2, y2: 46 }),
      s('text', { class: 'label', x: cx - 4, y: 12, 'text-anchor': 'end', text: 'cut' })));
  }
  out.push(svg);
  if (cut) out.push(h('p', { class: 'cut-text' }, 'cut: ' + cut));
  // The events themselves, sliced out of the recorded body by their end
  // offsets (bytes), when the body was recorded.
  const bytes = r.responseBody ? new TextEncoder().encode(r.responseBody.text) : null;
  const dec = new TextDecoder();
  const ol = h('ol', { class: 'events' });
  let prev = 0;
  arr.forEach(([end, ms], i) => {
    const n = i + 1;
    const text = bytes && prev < bytes.length ? dec.decode(bytes.subarray(prev, Math.min(end, bytes.length))) : '';
    ol.append(h('li', { class: n === terminal ? 'terminal' : '' },
      h('span', { class: 'ev-head' }, `${fmtMs(ms)} · bytes ${prev}–${end}${n === terminal ? ' · terminal' : ''}`),
      text ? h('pre', {}, text.trimEnd()) : null));
    prev = end;
  });
  out.push(ol);
  return out;
}

function faultSection(r) {
  const f = r.fault;
  if (!f) return null;
  const out = [kv([
    ['selection', f.selection], ['endpoint', f.endpoint], ['seed', f.seed],
    ['fired', (f.fired || []).join(', ') || 'nothing fired'], ['issued state', f.issuedState],
  ])];
  if (f.decisions && f.decisions.length) {
    const t = h('table', { class: 'decisions' }, h('tr', {}, ...Object.keys(f.decisions[0]).map((k) => h('th', { scope: 'col' }, k))));
    for (const d of f.decisions) t.append(h('tr', {}, ...Object.keys(f.decisions[0]).map((k) => h('td', {}, typeof d[k] === 'object' ? JSON.stringify(d[k]) : String(d[k] ?? '')))));
    out.push(t);
  }
  return out;
}

function showDetail(r) {
  const pane = $('detail');
  if (!r) {
    pane.replaceChildren(h('p', { class: 'empty' }, 'Select a row: click it, or move with ↑/↓.'));
    return;
  }
  const layer = layerOf(r);
  const head = h('header', { class: 'detail-head' },
    h('h2', {}, r.outcome ? h('span', { class: 'badge layer-' + (layer || 'unknown') }, r.outcome) : h('span', { class: 'badge' }, r.kind || 'record'),
      ' ', r.method || '', r.tool ? ` · ${r.tool}` : ''),
    r.reason ? h('p', { class: 'reason' }, r.reason) : null);
  const jr = r.jsonrpc || {};
  const warnings = (r.warnings || []).map((w) => h('li', { class: 'warning', 'data-code': w.code },
    h('strong', {}, w.code), ': ', w.message,
    META.warningRules[w.code] ? h('div', { class: 'rule' }, 'rule: ', META.warningRules[w.code]) : null));
  const flags = (r.flags || []).map((f) => h('li', {}, h('strong', {}, f), ': ', META.flagDocs[f] || 'unknown flag'));
  const d = r.decision;
  const parts = [
    head,
    section('Exchange', kv([
      ['kind', r.kind], ['id', r.id], ['call', r.callId], ['seq', r.seq], ['exchanges', r.exchanges],
      ['time', r.time], ['layer', layer], ['status', r.status], ['HTTP statuses', (r.httpStatuses || []).join(', ')],
      ['request', [r.httpMethod, r.url].filter(Boolean).join(' ')], ['content type', r.contentType],
      ['JSON-RPC id', r.jsonrpc ? idText(jr.id, jr._idSource) : undefined],
      ['response id', jr.responseId !== undefined ? idText(jr.responseId, jr._responseIdSource) : undefined],
      ['JSON-RPC error', jr.errorCode !== undefined && jr.errorCode !== null ? `${jr.errorCode} ${jr.errorName || ''}` : undefined],
      ['error message', r.errorMessage], ['result type', r.resultType], ['isError', r.isError],
      ['client', r.client], ['protocol', r.protocolVersion], ['scenario', r.scenario], ['session', r.session],
      ['retry origin', r.retryOrigin], ['POSTs', r.postCount], ['policy retries', r.policyRetries], ['input rounds', r.inputRounds],
      ['headers after', r.timings && r.timings.headersMs !== undefined ? fmtMs(r.timings.headersMs) : undefined],
      ['first event after', r.timings && r.timings.firstEventMs !== undefined ? fmtMs(r.timings.firstEventMs) : undefined],
      ['total', r.timings && fmtMs(r.timings.totalMs)], ['retry-after', r.retryAfter],
      ['bytes', r.requestBytes || r.responseBytes ? `${r.requestBytes || 0} sent, ${r.responseBytes || 0} received` : undefined],
      ['note', r.note],
      ['re-judged', r._rejudged ? 'recorded RESULT_SUCCESS (application layer) by an mcpdiag before 2026-12-06; not a JSON-RPC request, so HTTP_SUCCESS (transport layer), as mcpdiag report counts it' : undefined],
      ['era fallback', r._eraFallback || (r.eraFallback && d && d.action === 'renegotiate')
        ? (r._eraFallback && r.method === 'initialize'
          ? 'yes: the POST initialize a 2024-11-05 HTTP+SSE server answered 404/405, after which the client opened the legacy GET stream (not a failure)'
          : 'yes: the 2026-07-28 request a 2025-11-25 server refused, after which the client fell back to initialize (not a failure)') : undefined],
      ['answered challenge', r._answeredBy
        ? `yes: the client's next such request, ${r._answeredBy}, carried a new token and was not refused (not a failure)` : undefined],
      ['resumed', r._resumedBy
        ? `yes: the server closed the stream before the response, which came on the GET that resumed it, ${r._resumedBy}: ${r._resumedOutcome} (counted so)` : undefined],
    ])),
    d ? section('Retry decision', kv([['action', d.action], ['delay', d.delayMs ? fmtMs(d.delayMs) : undefined], ['reason', d.reason || '(none given)']])) : null,
    section('Warnings', warnings.length ? h('ul', { class: 'warnings' }, warnings) : null),
    section('Flags', flags.length ? h('ul', {}, flags) : null),
    section('Fault', faultSection(r)),
    section('SSE events', sseTimeline(r)),
    r.network ? section('Network error', kv([['error', r.network.error], ['phase', r.network.phase], ['request sent', r.network.requestSent], ['timeout', r.network.timeout]])) : null,
    r.notClassified ? section('Not classified', kv(Object.entries(r.notClassified))) : null,
    r.input ? section('Input requests', kv([['requests', (r.input.requests || []).map((q) => `${q.key}: ${q.method}${q.mode ? ' (' + q.mode + ')' : ''}`).join('; ')], ['request state', r.input.hasRequestState]])) : null,
    r.task ? section('Task', kv(Object.entries(r.task))) : null,
    r.auth ? section('Authorization', kv(Object.entries(r.auth))) : null,
    r.errorData !== undefined ? section('Error data', h('pre', {}, JSON.stringify(r.errorData, null, 2))) : null,
    section('Request headers', headersTable(r.requestHeaders)),
    section('Request body', bodyBlock(r.requestBody, 'request body')),
    section('Response headers', headersTable(r.responseHeaders)),
    section('Response body', bodyBlock(r.responseBody, 'response body')),
    h('details', { class: 'raw' }, h('summary', {}, 'The record as JSON'), h('pre', {}, r._line !== undefined ? indentJSON(r._line) : (() => { const { _i, _text, _seen, _eraFallback, _answeredBy, ...plain } = r; return JSON.stringify(plain, null, 2); })())),
  ];
  pane.replaceChildren(...parts.filter(Boolean));
  pane.scrollTop = 0;
}

// ---- charts ----------------------------------------------------------------

// chartRecords are the records the summaries count: the calls when there
// are any, else the exchanges, else the server lines (report's sections).
function chartRecords() {
  for (const kind of ['call', 'exchange', 'server']) {
    const rs = model.records.filter((r) => r.kind === kind);
    if (rs.length) return { kind, rs };
  }
  return { kind: '', rs: [] };
}

function legend(items) {
  return h('ul', { class: 'legend' }, items.map(([cls, label]) => h('li', {}, h('span', { class: 'swatch ' + cls, 'aria-hidden': 'true' }), label)));
}

function chartLayers(rs, kind) {
  const el = $('chart-layers');
  const ts = rs.map((r) => Date.parse(r.time)).filter((t) => !Number.isNaN(t));
  if (ts.length === 0) { el.replaceChildren(h('p', { class: 'note' }, 'no records with a time')); return; }
  const lo = Math.min(...ts), hi = Math.max(...ts);
  const B = 24, span = Math.max(hi - lo, 1);
  const layers = [...META.layers, ''];
  const buckets = Array.from({ length: B }, () => new Map());
  let maxN = 0;
  for (const r of rs) {
    const t = Date.parse(r.time);
    if (Number.isNaN(t)) continue;
    const b = Math.min(B - 1, Math.floor(((t - lo) / span) * B));
    const l = layerOf(r) || '';
    buckets[b].set(l, (buckets[b].get(l) || 0) + 1);
  }
  for (const m of buckets) maxN = Math.max(maxN, [...m.values()].reduce((a, b) => a + b, 0));
  const W = 360, H = 140, P = 28, bw = (W - P - 4) / B;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H + 18}`, role: 'img', 'aria-label': `${kind} records by layer over time` });
  svg.append(s('line', { class: 'axis', x1: P, x2: W, y1: H, y2: H }),
    s('text', { class: 'tick', x: P - 4, y: 10, 'text-anchor': 'end', text: String(maxN) }),
    s('text', { class: 'tick', x: P, y: H + 14, text: fmtTime(new Date(lo).toISOString()) }),
    s('text', { class: 'tick', x: W, y: H + 14, 'text-anchor': 'end', text: fmtTime(new Date(hi).toISOString()) }));
  buckets.forEach((m, i) => {
    let y = H;
    for (const l of layers) {
      const n = m.get(l) || 0;
      if (!n) continue;
      const bh = ((H - 4) * n) / maxN;
      y -= bh;
      svg.append(s('rect', { class: 'bar fill-layer-' + (l || 'unknown'), x: P + i * bw + 1, y, width: Math.max(1, bw - 2), height: bh, 'data-layer': l },
        s('title', { text: `${n} ${l || 'no layer'}` })));
    }
  });
  el.replaceChildren(svg, legend(layers.filter((l) => rs.some((r) => (layerOf(r) || '') === l)).map((l) => ['fill-layer-' + (l || 'unknown'), l || 'no layer'])),
    h('p', { class: 'note' }, `${rs.length} ${kind} records`));
}

const EDGES = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, Infinity];

function chartLatency(rs) {
  const el = $('chart-latency');
  const by = new Map();
  for (const r of rs) {
    const ms = r.timings && r.timings.totalMs;
    // A record of an interrupted run, or of an exchange the shutdown cut,
    // has the stop's time, not a latency (report leaves it out of its
    // percentiles too).
    if (ms === undefined || !r.outcome || isInterrupted(r) || isCutByShutdown(r)) continue;
    if (!by.has(r.outcome)) by.set(r.outcome, new Array(EDGES.length).fill(0));
    by.get(r.outcome)[EDGES.findIndex((e) => ms < e)]++;
  }
  if (by.size === 0) { el.replaceChildren(h('p', { class: 'note' }, 'no timings')); return; }
  const outs = [...by.entries()].sort((a, b) => b[1].reduce((x, y) => x + y) - a[1].reduce((x, y) => x + y)).slice(0, 6);
  const W = 360, RH = 30, P = 130, bw = (W - P) / EDGES.length;
  const svg = s('svg', { viewBox: `0 0 ${W} ${outs.length * RH + 16}`, role: 'img', 'aria-label': 'latency histogram by outcome' });
  outs.forEach(([o, counts], row) => {
    const max = Math.max(...counts);
    const y0 = row * RH;
    const layer = OUTCOMES.get(o) ? OUTCOMES.get(o).layer : 'unknown';
    svg.append(s('text', { class: 'tick', x: P - 6, y: y0 + RH - 10, 'text-anchor': 'end', text: `${o} (${counts.reduce((x, y) => x + y)})` }));
    counts.forEach((n, i) => {
      if (!n) return;
      const bh = ((RH - 6) * n) / max;
      svg.append(s('rect', { class: 'bar fill-layer-' + layer, x: P + i * bw + 1, y: y0 + RH - 4 - bh, width: bw - 2, height: bh, 'data-outcome': o },
        s('title', { text: `${o}: ${n} under ${EDGES[i] === Infinity ? '∞' : EDGES[i] + ' ms'}` })));
    });
  });
  const yb = outs.length * RH + 12;
  [0, 3, 6, 9, 12].forEach((i) => svg.append(s('text', { class: 'tick', x: P + i * bw, y: yb, text: i === 0 ? '<1' : '<' + EDGES[i] })));
  el.replaceChildren(svg);
}

function chartTools(rs) {
  const el = $('chart-tools');
  const by = new Map();
  for (const r of rs) {
    if (!r.tool) continue;
    const t = by.get(r.tool) || { all: 0, failed: 0 };
    t.all++;
    if (isFailure(r)) t.failed++;
    by.set(r.tool, t);
  }
  const tools = [...by.entries()].sort((a, b) => b[1].failed - a[1].failed || b[1].failed / b[1].all - a[1].failed / a[1].all || a[0].localeCompare(b[0])).slice(0, 8);
  if (tools.length === 0) { el.replaceChildren(h('p', { class: 'note' }, 'no tool calls')); return; }
  const W = 360, RH = 18, P = 110;
  const max = Math.max(...tools.map(([, t]) => t.all));
  const svg = s('svg', { viewBox: `0 0 ${W} ${tools.length * RH + 4}`, role: 'img', 'aria-label': 'tools by failed calls' });
  tools.forEach(([name, t], i) => {
    const y = i * RH + 2;
    const wAll = ((W - P - 60) * t.all) / max, wFail = ((W - P - 60) * t.failed) / max;
    svg.append(s('text', { class: 'tick', x: P - 6, y: y + 12, 'text-anchor': 'end', text: name }),
      s('rect', { class: 'bar all', x: P, y, width: wAll, height: RH - 4 }),
      s('rect', { class: 'bar failed', x: P, y, width: wFail, height: RH - 4, 'data-tool': name }, s('title', { text: `${name}: ${t.failed} of ${t.all} failed` })),
      s('text', { class: 'tick', x: P + wAll + 4, y: y + 12, text: `${t.failed}/${t.all}` }));
  });
  el.replaceChildren(svg);
}

let chartsTimer = 0;
let chartsDrawn = 0;
function drawCharts() {
  chartsDrawn = Date.now();
  if ($('charts').hidden) return;
  const { kind, rs } = chartRecords();
  chartLayers(rs, kind);
  chartLatency(rs);
  chartTools(rs);
}
// Charts are redrawn at most once a second while records stream in.
function scheduleCharts() {
  if (chartsTimer) return;
  const wait = Math.max(0, chartsDrawn + 1000 - Date.now());
  chartsTimer = setTimeout(() => { chartsTimer = 0; drawCharts(); }, wait);
}

$('toggle-charts').addEventListener('click', () => {
  const c = $('charts');
  c.hidden = !c.hidden;
  $('toggle-charts').setAttribute('aria-expanded', String(!c.hidden));
  if (!c.hidden) drawCharts();
});

// ---- input: filters, pause, clear ------------------------------------------

for (const k of filterIds) {
  $('f-' + k).addEventListener('change', (ev) => { filter[k] = ev.target.value; schedule(); });
}
$('f-text').addEventListener('input', (ev) => { filter.text = ev.target.value.trim().toLowerCase(); schedule(); });
$('filters').addEventListener('submit', (ev) => ev.preventDefault());

let paused = false;
let pending = [];
function togglePause() {
  paused = !paused;
  $('pause').setAttribute('aria-pressed', String(paused));
  $('pause').textContent = paused ? 'Resume' : 'Pause';
  if (!paused) {
    const rs = pending;
    pending = [];
    ingest(rs);
  }
  status();
}
$('pause').addEventListener('click', togglePause);
$('clear').addEventListener('click', () => {
  clearModel();
  pending = [];
  selected = null;
  showDetail(null);
  refreshFacets();
  schedule();
  scheduleCharts();
});

let connection = cfg.mode === 'live' ? 'connecting' : '';
let lastNote = '';
function status() {
  const parts = [];
  if (connection) parts.push(connection);
  if (lastNote) parts.push(lastNote);
  if (paused) parts.push(`paused, ${pending.length} new waiting`);
  $('status').textContent = parts.join(' · ');
}

function ingest(rs) {
  if (paused) {
    pending.push(...rs);
    status();
    return;
  }
  for (const r of rs) addRecord(r);
  drawMatrixSummary();
  refreshFacets();
  schedule();
  scheduleCharts();
}

// ---- the matrix grid (matrix --html) ---------------------------------------

function jsonLines(id) {
  const el = $(id);
  const out = [];
  if (!el) return out;
  for (const line of el.textContent.split('\n')) {
    if (!line.trim()) continue;
    try { out.push(JSON.parse(line)); } catch { /* not a case */ }
  }
  return out;
}

// jsonValue is the JSON of the element with this id, or undefined.
function jsonValue(id) {
  const el = $(id);
  if (!el) return undefined;
  try { return JSON.parse(el.textContent); } catch { return undefined; }
}

function verdictClass(v) {
  return v === 'pass' ? 'v-pass' : v === 'fail' ? 'v-fail' : v === 'not tested' ? 'v-nt' : v === 'running' ? 'v-run' : 'v-na';
}

function showCase(c) {
  const pane = $('detail');
  const failed = (c.checks || []).filter((ch) => ch.verdict === 'fail');
  const checks = h('table', { class: 'checks' }, h('tr', {}, h('th', { scope: 'col' }, 'rule'), h('th', { scope: 'col' }, 'verdict'), h('th', { scope: 'col' }, 'evidence')),
    (c.checks || []).map((ch) => h('tr', { class: ch.verdict === 'fail' ? 'fail' : '', 'data-rule': ch.rule },
      h('td', {}, ch.rule), h('td', {}, ch.verdict), h('td', {}, ch.evidence || ''))));
  const runs = (c.runs || []).map((r) => h('section', { class: 'sec run' },
    h('h3', {}, `run ${r.repeat}: ${r.verdict} · ${r.posts ? r.posts.length : 0} POSTs · ${fmtMs(r.durationMs)}`),
    kv([['endpoint', r.endpoint], ['client exit', r.client && r.client.exitCode !== undefined ? r.client.exitCode : undefined],
      ['client error', r.client && r.client.error]]),
    r.endpoint ? h('button', { type: 'button', class: 'show-run', 'data-endpoint': r.endpoint }, "show this run's exchanges in the table") : null,
    lateOf(r.endpoint).length ? h('p', { class: 'late-lines' }, `LATE: ${lateOf(r.endpoint).length} line(s) of this run came after it was judged (${lateOf(r.endpoint).map((x) => [x.method, x.tool].filter(Boolean).join(' ') || 'not JSON-RPC').join(', ')}): in no verdict, shown in the table`) : null,
    r.posts && r.posts.length ? h('table', { class: 'posts' },
      h('tr', {}, ['POST', 'at', 'method', 'tool', 'id', 'status', 'failed', 'fired'].map((k) => h('th', { scope: 'col' }, k))),
      r.posts.map((x) => h('tr', {}, [x.post, fmtMs(x.atMs), x.method, x.tool, x.id, x.status, x.failed, x.fired].map((v) => h('td', {}, v === undefined ? '' : String(v)))))) : null));
  pane.replaceChildren(...[
    h('header', { class: 'detail-head' }, h('h2', {}, h('span', { class: 'badge ' + (c.verdict === 'fail' ? 'layer-transport' : c.verdict === 'pass' ? 'layer-application' : 'layer-none') }, c.verdict), ' ', c.case, ` (${c.era})`)),
    section('Case', kv([['scenario', c.scenario], ['probe', c.probe], ['era', c.era], ['layer', c.layer], ['expected', c.expected], ['observed', c.observed || '(nothing printed)'],
      ['POSTs', c.posts], ['retries', c.retries ? `${c.retries}${c.why ? ' (' + c.why + ')' : ''}` : 0], ['MRTR rounds', c.rounds],
      ['failed runs', `${c.failedRuns} of ${c.runCount}`], ['not tested', c.notTestedRuns ? `${c.notTestedRuns} of ${c.runCount}: ${c.notTested || ''}` : undefined],
      ['tool', c.tool], ['incomplete', c.incomplete]])),
    failed.length ? section('Failed rules', h('ul', { class: 'warnings' }, failed.map((ch) => h('li', { class: 'failed-rule', 'data-rule': ch.rule },
      h('strong', {}, ch.rule), ': ', ch.evidence || '', h('div', { class: 'rule' }, ch.title || ''), h('div', { class: 'rule' }, 'cites: ', ch.cite || ''))))) : null,
    section('Checks', checks),
    ...runs].filter(Boolean));
  pane.scrollTop = 0;
}

// lateOf returns the late lines (isLate) logged at a run's endpoint.
function lateOf(endpoint) {
  if (!endpoint) return [];
  return model.records.filter((x) => isLate(x) && x.url === endpoint);
}

// The matrix's cases by case and era: a case published again (live)
// replaces its cell.
const matrixCases = new Map();
const caseKey = (name, era) => name + '\u0000' + era;
let matrixTimer = 0;
function addCases(cases, now = false) {
  for (const c of cases) if (c && c.case) matrixCases.set(caseKey(c.case, c.era), c);
  if (now) { drawMatrix([...matrixCases.values()]); return; }
  if (matrixCases.size && !matrixTimer) matrixTimer = requestAnimationFrame(() => { matrixTimer = 0; drawMatrix([...matrixCases.values()]); });
}

$('matrix-grid').addEventListener('click', (ev) => {
  const b = ev.target.closest('button.cell');
  if (!b) return;
  $('matrix-grid').querySelectorAll('button.cell[aria-pressed="true"]').forEach((x) => x.setAttribute('aria-pressed', 'false'));
  b.setAttribute('aria-pressed', 'true');
  selected = null;
  schedule(false);
  showCase(matrixCases.get(caseKey(b.dataset.case, b.dataset.era)));
});

// drawMatrixSummary writes the matrix's summary line: the cases by verdict
// and, as matrix's text report says, the server log lines that came after
// their run was judged (in no verdict; they arrive as records, after the
// cases, so the line is redrawn as records come).
function drawMatrixSummary() {
  const cases = [...matrixCases.values()];
  if (cases.length === 0) return;
  const count = (v) => cases.filter((c) => c.verdict === v).length;
  $('matrix-summary').textContent = `${cases.length} cases, ${count('fail')} failed` +
    ['not tested', 'running', 'interrupted', 'not run'].map((v) => [v, count(v)]).filter(([, n]) => n).map(([v, n]) => `, ${n} ${v}`).join('') +
    (model.late ? `; LATE: ${model.late} server log line(s) came after their run was judged, in no verdict` : '');
}

function drawMatrix(cases) {
  if (cases.length === 0) return;
  $('matrix').hidden = false;
  const eras = [...new Set(cases.map((c) => c.era))].sort().reverse();
  const rows = new Map();
  for (const c of cases) {
    const key = c.scenario + (c.probe ? '/' + c.probe : '');
    if (!rows.has(key)) rows.set(key, new Map());
    rows.get(key).set(c.era, c);
  }
  drawMatrixSummary();
  const grid = $('matrix-grid');
  grid.replaceChildren(h('tr', {}, h('th', { scope: 'col' }, 'scenario / probe'), eras.map((e) => h('th', { scope: 'col' }, e))),
    ...[...rows.entries()].map(([key, byEra]) => h('tr', {}, h('th', { scope: 'row' }, key), eras.map((e) => {
      const c = byEra.get(e);
      if (!c) return h('td', {});
      const label = c.verdict === 'fail' ? (c.runCount > 1 ? `FAIL ${c.failedRuns}/${c.runCount}` : 'FAIL') : c.verdict === 'running' ? 'running…' : c.verdict;
      const title = c.verdict === 'not tested' ? `not tested: ${c.notTested || ''}` : (c.failedRules || []).join(', ') || c.verdict;
      const pressed = grid.querySelector(`button.cell[aria-pressed="true"][data-case="${CSS.escape(c.case)}"][data-era="${CSS.escape(c.era)}"]`) !== null;
      return h('td', {}, h('button', {
        type: 'button', class: 'cell ' + verdictClass(c.verdict), 'data-case': c.case, 'data-era': c.era, 'aria-pressed': String(pressed),
        title, 'aria-label': `${c.case} ${c.era}: ${c.verdict}`,
      }, label));
    }))));
}

$('detail').addEventListener('click', (ev) => {
  const b = ev.target.closest('button.show-run');
  if (!b) return;
  const i = $('f-text');
  i.value = b.dataset.endpoint;
  filter.text = b.dataset.endpoint.toLowerCase();
  schedule();
});

// ---- sources ---------------------------------------------------------------

function staticRecords() {
  const text = $('mcpdiag-records').textContent;
  const out = [];
  let bad = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try { out.push(parseRecord(line)); } catch { bad++; }
  }
  if (bad) $('status').textContent = `${bad} lines of the page's data were not JSON`;
  return out;
}

// A static page shows its records in time order (the files it was made
// from are concatenated); a call's exchanges stay under their call.
addCases(jsonLines('mcpdiag-matrix'), true);
for (const id of jsonValue('mcpdiag-era-fallbacks') || []) markEraFallback(id);
for (const l of jsonValue('mcpdiag-answered-challenges') || []) markChallenge(l);
for (const l of jsonValue('mcpdiag-resumed-streams') || []) markResume(l);
ingest(staticRecords().map((r, i) => [Date.parse(r.time), i, r])
  .sort((a, b) => (a[0] || 0) - (b[0] || 0) || a[1] - b[1]).map((e) => e[2]));
document.body.dataset.ready = 'true';
// For tests and the curious: each record's delay from the end of its
// exchange (time + timings.totalMs) to the page, in ms.
window.mcpdiagDelays = () => model.records.filter((r) => r.time && r.timings && r.timings.totalMs !== undefined)
  .map((r) => ({ id: r.id, ms: r._seen - (Date.parse(r.time) + r.timings.totalMs) }));

if (cfg.mode === 'live') {
  const es = new EventSource(cfg.events);
  const batch = [];
  let flush = 0;
  es.addEventListener('record', (ev) => {
    try { batch.push(parseRecord(ev.data)); } catch { return; }
    if (!flush) flush = setTimeout(() => { flush = 0; ingest(batch.splice(0)); }, 16);
  });
  es.addEventListener('fallback', (ev) => {
    let id;
    try { id = JSON.parse(ev.data); } catch { return; }
    markEraFallback(id);
    schedule();
    scheduleCharts();
  });
  es.addEventListener('challenge', (ev) => {
    let l;
    try { l = JSON.parse(ev.data); } catch { return; }
    markChallenge(l);
    schedule();
    scheduleCharts();
  });
  es.addEventListener('resume', (ev) => {
    let l;
    try { l = JSON.parse(ev.data); } catch { return; }
    markResume(l);
    schedule();
    scheduleCharts();
  });
  es.addEventListener('case', (ev) => { try { addCases([JSON.parse(ev.data)]); } catch { /* not a case */ } });
  es.addEventListener('note', (ev) => { lastNote = ev.data; status(); });
  es.addEventListener('open', () => { connection = 'live'; status(); });
  es.addEventListener('error', () => { connection = es.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…'; status(); });
}
status();
