// DashboardE2E: the dashboard of `tessera serve` in headless Chromium,
// against a real daemon and two node agents on fake machines (the fake NVML
// and tessera-standin in place of MPS and Triton).
//
// It starts `tessera serve` on a free loopback port and two agents
// (node-0, node-1, 4 fake A100s each), puts S3 and rolls out its first plan
// through the API, then in the page: checks the layout and the services,
// previews a new rate for one service, applies it, waits until the page
// shows the transition done, and screenshots the page to
// $TESSERA_DASHBOARD_SCREENSHOT. With TESSERA_DOCS_SCREENSHOT=1 it also
// writes docs/dashboard.png (1000x740, at most 150 KB), docs/control-plane.md's
// picture.
//
// Run by ctest through `scripts/nodeenv.sh --run` (NODEENV: the npm
// packages); environment: TESSERA_BINARY, TESSERA_FAKE_NVML,
// TESSERA_STANDIN, TESSERA_SOURCE_DIR, TESSERA_DASHBOARD_SCREENSHOT,
// CHROMIUM (default /usr/bin/chromium). Every wait is bounded and names
// what it waited for; every process it started is killed at the end, also
// on failure.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const env = (name) => process.env[name] || assert.fail(`${name} is not set (ctest sets it)`);
const BINARY = env('TESSERA_BINARY');
const SOURCE_DIR = env('TESSERA_SOURCE_DIR');
const SCREENSHOT = env('TESSERA_DASHBOARD_SCREENSHOT');
const STANDIN = env('TESSERA_STANDIN');
const FAKE_NVML = env('TESSERA_FAKE_NVML');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const { chromium } = createRequire(path.join(env('NODEENV'), 'package.json'))('playwright-core');

const NODES = ['node-0', 'node-1'];
const TOKEN = 'dashboard-test-token';  // the daemon's bearer token (--token-file)
const SERVICE = 'resnet50';  // the service whose rate the page changes
const NEW_RATE = 1700;       // S3 declares 1463 req/s
const DEADLINE_MS = 240_000; // the whole test; ctest's TIMEOUT is longer

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-dashboard-'));
const children = [];

// --- Processes.

// Starts `tessera args` with `extraEnv`; its output goes to <tmp>/<name>.log.
function start(name, args, extraEnv = {}) {
  const log = fs.openSync(path.join(tmp, `${name}.log`), 'w');
  const child = spawn(BINARY, args, {
    env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', log], detached: true,
  });
  child.name = name;
  child.output = '';
  child.stdout.on('data', (d) => { child.output += d; fs.appendFileSync(log, d); });
  children.push(child);
  return child;
}

// The pids of processes whose environment holds `entry` (what an agent's
// units carry: TESSERA_AGENT_STATE_DIR=<its state directory>).
function pidsWithEnv(entry) {
  const pids = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) pids.push(+pid);
    } catch { /* gone, or not ours */ }
  }
  return pids;
}

function killEverything() {
  for (const child of children) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  for (const node of NODES) {
    for (const pid of pidsWithEnv(`TESSERA_AGENT_STATE_DIR=${path.join(tmp, node)}`)) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    }
  }
}

function logs() {
  return children.map((c) => `--- ${c.name} (exit ${c.exitCode ?? 'running'})\n` +
    fs.readFileSync(path.join(tmp, `${c.name}.log`), 'utf8').split('\n').slice(-15).join('\n')).join('\n');
}

// An error that ends a wait at once (other errors of a probe are retried).
const fatal = (message) => Object.assign(new Error(message), { fatal: true });

// Polls `probe` every 200 ms until it returns a truthy value (returned), at
// most `ms`; a process of ours that exits meanwhile fails the wait.
async function waitFor(what, probe, ms) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      if (e.fatal) throw e;
      last = e;
    }
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}`);
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}${last ? `; last: ${last.message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

// --- The API.

let base;

async function api(method, route, body) {
  const reply = await fetch(base + route, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${route}: ${reply.status} ${text}`);
  return JSON.parse(text);
}

// S3 from examples/scenarios/s3.yaml, whose services are one flow mapping
// a line (`- {name: bert, model: bert-large, rate_rps: 46, slo_ms: 4294}`).
function readScenario(file) {
  const text = fs.readFileSync(file, 'utf8');
  const scalar = (v) => (/^-?[\d.]+$/.test(v) ? Number(v) : v);
  const services = [...text.matchAll(/^\s*- \{(.*)\}\s*$/gm)].map((m) => Object.fromEntries(
    m[1].split(',').map((kv) => kv.split(':').map((s) => s.trim())).map(([k, v]) => [k, scalar(v)])));
  const top = (key) => text.match(new RegExp(`^${key}: (\\S+)`, 'm'))?.[1];
  assert.ok(services.length > 0, `${file}: no services read`);
  return { name: top('name'), gpu: top('gpu'), services };
}

async function waitTransitionDone(id, what) {
  return waitFor(what, async () => {
    const t = await api('GET', `/v1/transitions/${id}`);
    if (t.state === 'paused' || t.state === 'aborted') throw fatal(`transition ${id} is ${t.state}: ${t.error}`);
    return t.state === 'done';
  }, 120_000);
}

// --- The test.

async function main() {
  const tokenFile = path.join(tmp, 'token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`);
  // --no-auto: only the page changes the cluster.
  const serve = start('serve', ['serve', '--listen', '127.0.0.1:0', '--db', path.join(tmp, 'tessera.db'),
    '--gpus-per-node', '4', '--no-auto', '--token-file', tokenFile]);
  const line = await waitFor('serve to print its address',
    () => serve.output.match(/tessera serve: listening on (http:\/\/\S+) \(store /), 30_000);
  base = line[1];

  // Both nodes on this host: each its own MPS directories and serving ports
  // (disjoint: a node of 4 GPUs takes at most 4,608 ports from its base).
  for (const [k, node] of NODES.entries()) {
    start(node, ['agent', '--server', base, '--node', node, '--token-file', tokenFile,
      '--state-dir', path.join(tmp, node),
      '--nvml', FAKE_NVML, '--poll-wait', '1', '--base-port', String(20000 + 5000 * k),
      '--mps-root', path.join(tmp, `mps-${k}`), '--mps-command', `${STANDIN} mps -d`,
      '--mps-control-command', `${STANDIN} mps-control`,
      '--serve-command', `${STANDIN} serve --http-port={http_port} --model={model} --batch={batch}`,
      '--ready-timeout', '20s', '--drain-timeout', '5s'],
    { TESSERA_FAKE_NVML_STATE: path.join(tmp, `${node}-nvml.json`), TESSERA_FAKE_NVML_DEVICES: 'a100-80gb*4' });
  }

  await api('PUT', '/v1/scenario', readScenario(path.join(SOURCE_DIR, 'examples/scenarios/s3.yaml')));
  const first = await api('POST', '/v1/plans', {});
  const rollout = await api('POST', '/v1/transitions', { to: first.id, start: true });
  await waitTransitionDone(rollout.id, `the first rollout (transition ${rollout.id}) to be done`);

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(base + '/');

    // The layout of the first plan and its services.
    await page.waitForSelector('#layout-svg > svg', { timeout: 30_000 });
    assert.match(await page.textContent('#layout-plan'), new RegExp(`plan ${first.id}\\b`));
    const rows = page.locator('#services-table tbody tr');
    await page.waitForFunction((n) => document.querySelectorAll('#services-table tbody tr').length === n,
      first.metrics.services.length, { timeout: 30_000 });
    assert.match(await rows.filter({ hasText: SERVICE }).textContent(), /1463\.0/);
    // Observed traffic, as a router would report it, beside the plan.
    await api('POST', '/v1/nodes/node-0/status',
      { observed: { [SERVICE]: { rate_rps: 1500.5, slo_compliance: 0.995 } } });
    await page.waitForFunction((name) => [...document.querySelectorAll('#services-table tbody tr')]
      .some((tr) => tr.textContent.includes(name) && tr.textContent.includes('1500.5') &&
        tr.textContent.includes('99.50%')), SERVICE, { timeout: 30_000 });
    await page.waitForSelector(`#transition[data-transition-id="${rollout.id}"][data-state="done"]`,
      { timeout: 30_000 });

    // API errors are shown: a preview without the token, then a rate over
    // the input limit with it.
    const previewError = async (pattern) => {
      await page.click('#preview');
      await page.waitForFunction((p) => !document.getElementById('error').hidden &&
        new RegExp(p).test(document.getElementById('error').textContent), pattern, { timeout: 30_000 });
      assert.ok(await page.isDisabled('#apply'), 'Apply is enabled after a failed preview');
    };
    await page.selectOption('#rate-service', SERVICE);
    await page.fill('#rate-value', '1e9');
    await previewError('^unauthorized: ');
    await page.fill('#token', TOKEN);
    await previewError('^invalid_argument: .*rate');
    assert.equal(await page.evaluate(() => localStorage.getItem('tessera.token')), TOKEN);

    // Preview the new rate: the plan's services, its layout, the transition.
    await page.fill('#rate-value', String(NEW_RATE));
    await page.click('#preview');
    await page.waitForSelector('#apply:not([disabled])', { timeout: 60_000 });
    assert.ok(await page.isHidden('#error'), 'the error stays after a good preview');
    const previewed = Number(await page.getAttribute('#preview-result', 'data-transition-id'));
    const proposed = await api('GET', `/v1/transitions/${previewed}`);
    assert.equal(proposed.state, 'proposed');
    assert.equal(proposed.from, first.id);
    assert.match(await page.textContent('#preview-summary'), new RegExp(`^Plan ${proposed.to}: `));
    assert.match(await page.locator('#preview-services tbody tr').filter({ hasText: SERVICE }).textContent(),
      new RegExp(`${NEW_RATE}\\.0`));
    assert.equal(await page.locator('#preview-svg > svg').count(), 1, 'no SVG of the previewed plan');
    assert.equal(await page.locator('#preview-phases > li').count(), proposed.phases.length);

    // Apply: the page shows the transition running, then done, on the new plan.
    await page.click('#apply');
    await waitFor(`the page to show transition ${previewed} done`, async () => {
      const state = await page.getAttribute(`#transition[data-transition-id="${previewed}"]`, 'data-state',
        { timeout: 1000 }).catch(() => null);
      if (state === 'paused') throw fatal(`transition ${previewed} paused: ${await page.textContent('#transition-error')}`);
      return state === 'done';
    }, 120_000);
    await page.waitForSelector(`#layout-plan:text("plan ${proposed.to}")`, { timeout: 30_000 });
    assert.match(await rows.filter({ hasText: SERVICE }).textContent(), new RegExp(`${NEW_RATE}\\.0`));
    assert.equal((await api('GET', '/v1/scenario')).services.find((s) => s.name === SERVICE).rate_rps, NEW_RATE);
    assert.equal((await api('GET', '/v1/deployment')).plan, proposed.to);
    assert.ok(await page.isHidden('#error'), `the page shows an error: ${await page.textContent('#error')}`);
    assert.deepEqual(pageErrors, []);

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    if (process.env.TESSERA_DOCS_SCREENSHOT === '1') {
      const docs = path.join(SOURCE_DIR, 'docs/dashboard.png');
      await page.setViewportSize({ width: 1000, height: 740 });
      await page.screenshot({ path: docs });
      const kb = fs.statSync(docs).size / 1024;
      assert.ok(kb <= 150, `${docs} is ${kb.toFixed(0)} KB (at most 150)`);
    }
  } finally {
    await browser.close();
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => { killEverything(); process.exit(1); });
}
const deadline = setTimeout(() => {
  console.error(`DashboardE2E: over ${DEADLINE_MS / 1000} s; killing everything\n${logs()}`);
  killEverything();
  process.exit(1);
}, DEADLINE_MS);

try {
  await main();
  console.log(`DashboardE2E: ok; screenshot in ${SCREENSHOT}`);
} catch (e) {
  console.error(`DashboardE2E failed: ${e.stack}\n${logs()}`);
  process.exitCode = 1;
} finally {
  clearTimeout(deadline);
  killEverything();
  fs.rmSync(tmp, { recursive: true, force: true });
}
