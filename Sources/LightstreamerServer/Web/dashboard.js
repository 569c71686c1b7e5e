// The monitoring dashboard: the MONITOR adapter set's items live over TLCP, plots of the last
// ten minutes, and the admin actions of the admin API (docs/ADMIN.md).
import { TlcpClient } from './tlcp.js';
import { TimePlot, shortNumber } from './plot.js';

const SERVER_FIELDS = ['sessions', 'sessions_ws', 'sessions_http', 'sessions_unbound', 'sessions_created',
  'connections', 'subscriptions', 'items', 'updates_in_per_s', 'updates_out_per_s', 'bytes_out_per_s',
  'updates_filtered', 'updates_lost', 'updates_conflated', 'sessions_blocked', 'mpn_devices', 'mpn_active', 'mpn_triggered', 'uptime_s'];
const FIGURES = [
  ['sessions', 'Sessions'], ['sessions_ws', 'WebSocket sessions'], ['sessions_http', 'HTTP sessions'],
  ['sessions_unbound', 'Unbound sessions'], ['connections', 'Connections'], ['subscriptions', 'Subscriptions'],
  ['items', 'Items'], ['updates_in_per_s', 'Updates in /s'], ['updates_out_per_s', 'Updates out /s'],
  ['bytes_out_per_s', 'Bytes out /s'], ['updates_filtered', 'Updates filtered'],
  ['updates_lost', 'Updates lost (OV)'], ['updates_conflated', 'Updates conflated'],
  ['sessions_created', 'Sessions created'],
];
const SESSION_FIELDS = ['key', 'command', 'user', 'address', 'adapter_set', 'transport', 'age_s', 'backlog', 'subscriptions'];
const APP_FIELDS = ['key', 'command', 'platform', 'app', 'sent', 'failed', 'suspended'];

const $ = (id) => document.getElementById(id);
let canAct = false;

// Figures: one box per figure, the value updated in place.
const figureEls = new Map();
for (const [field, label] of FIGURES) {
  const box = document.createElement('div');
  box.className = 'figure';
  box.innerHTML = '<div class="label"></div><div class="value">–</div>';
  box.querySelector('.label').textContent = label;
  box.dataset.field = field;
  $('figures').appendChild(box);
  figureEls.set(field, box.querySelector('.value'));
}

const plots = {
  sessions: new TimePlot($('plot-sessions'), ['WS', 'HTTP', 'unbound']),
  updates: new TimePlot($('plot-updates'), ['in', 'out']),
  bytes: new TimePlot($('plot-bytes'), ['out']),
};

async function api(action, body) {
  const r = await fetch(`admin/api/${action}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}),
    credentials: 'same-origin', cache: 'no-store',
  });
  let json = {};
  try { json = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) throw new Error(json.error || `HTTP ${r.status}`);
  return json;
}

function report(text) { $('action-result').textContent = text; }

async function act(action, body, done) {
  try {
    const r = await api(action, body);
    report(done ? done(r) : `${action}: done`);
  } catch (e) {
    report(`${action}: ${e.message}`);
  }
}

const client = new TlcpClient({
  adapterSet: 'MONITOR',
  credentials: () => api('dashboard-token').then((r) => ({ user: r.user, password: r.token })),
  onStatus: (s, detail) => { $('status').textContent = detail ? `${s} (${detail})` : s; $('status').dataset.status = s; },
});

client.subscribe({
  mode: 'MERGE', items: ['server'], fields: SERVER_FIELDS, snapshot: true,
  onUpdate: ({ fields, changed }) => {
    for (const [field] of FIGURES) {
      const v = fields[field];
      const el = figureEls.get(field);
      const text = v === null ? '–' : (Number(v) >= 1e4 ? shortNumber(Number(v)) : v);
      if (el.textContent !== text) {
        el.textContent = text;
        if (changed.has(field)) {
          el.classList.add('flash');
          clearTimeout(el.flashTimer);
          el.flashTimer = setTimeout(() => el.classList.remove('flash'), 700);
        }
      }
    }
    $('admission').textContent = fields.sessions_blocked === 'true' ? 'BLOCKED' : 'allowed';
    $('admission').dataset.blocked = fields.sessions_blocked;
    plots.sessions.push([Number(fields.sessions_ws), Number(fields.sessions_http), Number(fields.sessions_unbound)]);
    plots.updates.push([Number(fields.updates_in_per_s), Number(fields.updates_out_per_s)]);
    plots.bytes.push([Number(fields.bytes_out_per_s)]);
    if (fields.mpn_devices !== null) {
      $('mpn-totals').textContent = `Devices: ${fields.mpn_devices} · active subscriptions: ${fields.mpn_active}`
        + ` · triggered: ${fields.mpn_triggered}`;
    }
  },
});

/** A COMMAND table: rows by key; `cells` maps a row's fields to cell texts; `buttons` adds actions. */
function commandTable(tbody, cells, buttons) {
  const rows = new Map();
  return {
    onUpdate: ({ fields }) => {
      const key = fields.key;
      if (key === null) return;
      let tr = rows.get(key);
      if (fields.command === 'DELETE') { if (tr) { tr.remove(); rows.delete(key); } return; }
      const texts = cells(fields);
      if (!tr) {
        tr = document.createElement('tr');
        tr.dataset.key = key;
        for (let i = 0; i < texts.length; i++) tr.appendChild(document.createElement('td'));
        const td = document.createElement('td');
        for (const b of buttons(fields)) td.appendChild(b);
        tr.appendChild(td);
        rows.set(key, tr);
        tbody.appendChild(tr);
      }
      texts.forEach((t, i) => { if (tr.cells[i].textContent !== (t ?? '')) tr.cells[i].textContent = t ?? ''; });
    },
    onClear: () => { tbody.replaceChildren(); rows.clear(); },
    // Subscribed again on a new session: its snapshot rebuilds the table.
    onSubscribed: () => { tbody.replaceChildren(); rows.clear(); },
  };
}

function button(label, cls, onClick) {
  const b = document.createElement('button');
  b.textContent = label;
  b.className = cls;
  b.dataset.admin = '';
  b.disabled = !canAct;
  b.addEventListener('click', onClick);
  return b;
}

client.subscribe(Object.assign({ mode: 'COMMAND', items: ['sessions'], fields: SESSION_FIELDS, snapshot: true },
  commandTable($('sessions').tBodies[0],
    (f) => [f.key, f.user, f.address, f.adapter_set, f.transport, f.age_s, f.backlog, f.subscriptions],
    (f) => [button('Destroy', 'danger', () => act('sessions/destroy', { session: f.key, code: 32,
      message: 'Closed from the dashboard' }, () => `session ${f.key} destroyed`))])));

client.subscribe(Object.assign({ mode: 'COMMAND', items: ['mpn_apps'], fields: APP_FIELDS, snapshot: true },
  commandTable($('mpn-apps').tBodies[0],
    (f) => [f.app, f.platform, f.sent, f.failed, f.suspended],
    (f) => [
      button('Suspend', 'danger', () => act('mpn/apps/suspend', { platform: f.platform, app: f.app })),
      button('Resume', 'secondary', () => act('mpn/apps/resume', { platform: f.platform, app: f.app })),
    ])));

$('block').addEventListener('click', () => act('sessions/block', {}, () => 'new sessions blocked'));
$('allow').addEventListener('click', () => act('sessions/allow', {}, () => 'new sessions allowed'));
$('clear-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  act('items/clear-snapshot', { adapterSet: $('clear-set').value, item: $('clear-item').value });
});
$('device-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  act('mpn/devices/delete', { device: $('device-id').value });
});

// Read-only without configured credentials: the buttons stay disabled.
fetch('admin/api/status', { credentials: 'same-origin', cache: 'no-store' })
  .then((r) => r.json())
  .then((s) => {
    canAct = Boolean(s.credentialsConfigured);
    $('mode').textContent = canAct ? '' : '(read-only: no admin credentials are configured)';
    for (const b of document.querySelectorAll('[data-admin]')) b.disabled = !canAct;
  })
  .catch(() => {});

client.connect();
window.addEventListener('pagehide', () => client.disconnect());
