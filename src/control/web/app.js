// The dashboard of `tessera serve` (docs/control-plane.md): polls the
// deployment and the latest transition every second, and previews then
// applies a change of one service's rate. Data goes into the page as text
// only; the SVGs are Tessera's own drawings, parsed as SVG and inlined.
'use strict';

const POLL_MS = 1000;
const TOKEN_KEY = 'tessera.token';

const $ = (id) => document.getElementById(id);

// An API error ({"error": {"code", "message", "field"}}) as one line.
class ApiError extends Error {
  constructor(status, error) {
    const field = error.field ? ` (${error.field})` : '';
    super(`${error.code || status}: ${error.message || 'request failed'}${field}`);
  }
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
    const token = $('token').value.trim();
    if (token) init.headers.Authorization = `Bearer ${token}`;
  }
  const reply = await fetch(path, init);
  const text = await reply.text();
  if (!reply.ok) {
    let error = {};
    try { error = JSON.parse(text).error || {}; } catch { error = { message: text }; }
    throw new ApiError(reply.status, error);
  }
  return reply.headers.get('Content-Type')?.startsWith('application/json') ? JSON.parse(text) : text;
}

function showError(error) {
  $('error').textContent = error ? error.message : '';
  $('error').hidden = !error;
}

// An element with text and attributes; children appended in order.
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

const fmt = (x, digits = 1) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits));
const percent = (ratio) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(0)}%`;

function setSvg(box, text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') throw new Error('the server sent an SVG that does not parse');
  box.replaceChildren(document.importNode(svg, true));
}

function fillRows(tbody, rows) {
  tbody.replaceChildren(...rows.map((cells) => {
    const tr = el('tr');
    for (const c of cells) tr.append(c instanceof Node ? c : el('td', {}, String(c)));
    return tr;
  }));
}

function headroomCell(s) {
  return el('td', { class: s.headroom_ratio < 0 ? 'bad' : 'good' }, percent(s.headroom_ratio));
}

// Phases, each with its steps as small chips coloured by state (the state
// also in words, for screen readers and the chip's tooltip).
function renderPhases(list, transition) {
  list.replaceChildren(...transition.phases.map((phase) => {
    const steps = phase.steps.map((step) => {
      const what = [step.action, step.service, step.profile && `${step.profile}@${step.start}`,
        `GPU ${step.gpu}${step.node ? ` (${step.node})` : ''}`].filter(Boolean).join(' ');
      return el('li', { class: `step ${step.state}`, 'data-state': step.state, title: `${what}: ${step.state}` },
        what, el('span', { class: 'sr-only' }, `: ${step.state}`),
        step.error ? el('span', { class: 'bad' }, ` ${step.error}`) : '');
    });
    return el('li', { 'data-state': phase.state },
      el('span', { class: `badge ${phase.state}` }, phase.state), ` Phase ${phase.index}`,
      el('ul', { class: 'steps' }, ...steps));
  }));
}

function transitionLine(t) {
  const s = t.summary;
  return `${s.steps} steps in ${s.phases} phases, ${s.gpus_touched} GPUs touched, ` +
    `peak ${s.peak_gpus} GPUs, capacity at least ${(s.min_capacity_ratio * 100).toFixed(0)}% of each floor throughout`;
}

// --- Polling: the deployment, its services and the latest transition.

let shownPlan;  // the plan whose SVG is on the page (undefined: none fetched yet)

async function refreshDeployment() {
  const d = await api('GET', '/v1/deployment');
  if (d.plan !== shownPlan) {
    if (d.plan === null) {
      $('layout-svg').replaceChildren(el('p', { class: 'muted' }, 'No deployment yet.'));
    } else {
      setSvg($('layout-svg'), await api('GET', '/v1/deployment/svg'));
    }
    $('layout-plan').textContent = d.plan === null ? '' : `plan ${d.plan}`;
    shownPlan = d.plan;
  }
  const m = d.metrics;
  $('deployment-totals').textContent = m
    ? `${m.gpus} GPUs, ${m.instances} instances${m.cost_per_hour === null ? '' : `, $${fmt(m.cost_per_hour, 2)}/h`}`
    : '';
  // What the routers and nodes measure, beside what was planned.
  const observed = (await api('GET', '/v1/observed')).services;
  fillRows($('services-table').tBodies[0], (m ? m.services : []).map((s) => {
    const o = observed[s.name];
    return [
      el('th', { scope: 'row', title: `model ${s.model}, SLO ${s.slo_ms} ms` }, s.name),
      fmt(s.rate_rps), fmt(s.capacity_rps), headroomCell(s), fmt(o?.rate_rps), fmt(o?.p99_ms),
      o?.slo_compliance == null ? '–' : `${(o.slo_compliance * 100).toFixed(2)}%`];
  }));
}

let declaredRates = new Map();  // service -> its rate in the stored scenario
let rateFilledFor = null;        // the service whose declared rate the form was given

// Puts the chosen service's declared rate in the form, once per choice.
function fillDeclaredRate() {
  const service = $('rate-service').value;
  if (service === rateFilledFor || !declaredRates.has(service)) return;
  $('rate-value').value = declaredRates.get(service);
  rateFilledFor = service;
}

async function refreshServiceChoices() {
  const { services } = await api('GET', '/v1/scenario');
  declaredRates = new Map(services.map((s) => [s.name, s.rate_rps]));
  const select = $('rate-service');
  const names = services.map((s) => s.name);
  if (names.join('\n') !== [...select.options].map((o) => o.value).join('\n')) {
    select.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
  }
  fillDeclaredRate();
}

async function refreshTransition() {
  const { transitions } = await api('GET', '/v1/transitions?limit=1');
  const section = $('transition');
  if (transitions.length === 0) return;
  const t = await api('GET', `/v1/transitions/${transitions[0].id}`);
  section.dataset.state = t.state;
  section.dataset.transitionId = t.id;
  const phase = t.state === 'running' || t.state === 'paused' ? `, phase ${t.phase} of ${t.summary.phases}` : '';
  $('transition-summary').replaceChildren(
    el('span', { id: 'transition-state', class: `badge ${t.state}` }, t.state),
    ` #${t.id}: plan ${t.from ?? 'none'} → plan ${t.to}${phase}. ${transitionLine(t)}.`);
  $('transition-error').textContent = t.error || '';
  $('transition-error').hidden = !t.error;
  renderPhases($('transition-phases'), t);
}

async function poll() {
  const results = await Promise.allSettled([refreshDeployment(), refreshServiceChoices(), refreshTransition()]);
  const failed = results.find((r) => r.status === 'rejected');
  $('connection').textContent = failed
    ? `Not updated: ${failed.reason.message}`
    : `Updated ${new Date().toLocaleTimeString()}`;
  setTimeout(poll, POLL_MS);
}

// --- Preview, then apply, a change of one service's rate.

let preview = null;  // {service, rate, transition}: what Apply starts

function clearPreview() {
  preview = null;
  $('apply').disabled = true;
  $('preview-result').hidden = true;
}

async function runPreview(event) {
  event.preventDefault();
  clearPreview();
  showError(null);
  const service = $('rate-service').value;
  const rate = Number($('rate-value').value);
  $('preview').disabled = true;
  try {
    const plan = await api('POST', '/v1/plans', { rates: { [service]: rate } });
    const t = await api('POST', '/v1/transitions', { to: plan.id, start: false });
    const m = plan.metrics;
    $('preview-summary').textContent = `Plan ${plan.id}: ${m.gpus} GPUs, ${m.instances} instances` +
      (plan.incremental ? ` (kept ${plan.incremental.kept}, moved ${plan.incremental.moved}, ` +
        `added ${plan.incremental.added}, removed ${plan.incremental.removed})` : '') + '.';
    fillRows($('preview-services').tBodies[0], m.services.map((s) => [
      el('th', { scope: 'row' }, s.name), fmt(s.rate_rps), fmt(s.capacity_rps), headroomCell(s)]));
    $('preview-transition').textContent = `Transition ${t.id} (${t.state}): ${transitionLine(t)}.`;
    renderPhases($('preview-phases'), t);
    setSvg($('preview-svg'), await api('GET', `/v1/plans/${plan.id}/svg`));
    preview = { service, rate, transition: t.id };
    $('preview-result').dataset.transitionId = t.id;
    $('preview-result').hidden = false;
    $('apply').disabled = false;
  } catch (e) {
    showError(e);
  } finally {
    $('preview').disabled = false;
  }
}

async function applyPreview() {
  if (!preview) return;
  const { service, rate, transition } = preview;
  clearPreview();
  showError(null);
  try {
    await api('PATCH', `/v1/services/${encodeURIComponent(service)}`, { rate_rps: rate, replan: false });
    await api('POST', `/v1/transitions/${transition}/start`, {});
    $('connection').textContent = `Transition ${transition} started`;
  } catch (e) {
    showError(e);
  }
}

function start() {
  $('token').value = localStorage.getItem(TOKEN_KEY) || '';
  $('token-form').addEventListener('submit', (event) => event.preventDefault());
  $('token').addEventListener('input', () => localStorage.setItem(TOKEN_KEY, $('token').value.trim()));
  $('rate-form').addEventListener('submit', runPreview);
  $('rate-service').addEventListener('change', () => { fillDeclaredRate(); clearPreview(); });
  $('rate-value').addEventListener('input', clearPreview);
  $('apply').addEventListener('click', applyPreview);
  poll();
}

start();
