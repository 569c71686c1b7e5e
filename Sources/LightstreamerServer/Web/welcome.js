// The welcome page: the DEMO stock list, portfolio and chat room, live over TLCP.
import { TlcpClient } from './tlcp.js';

const STOCK_FIELDS = ['stock_name', 'last_price', 'time', 'pct_change', 'bid_quantity', 'bid', 'ask',
  'ask_quantity', 'min', 'max', 'ref_price', 'open_price'];
const STOCKS = Array.from({ length: 30 }, (_, i) => `item${i + 1}`);
const CHAT_KEEP = 50;

const statusEl = document.getElementById('status');
const client = new TlcpClient({
  adapterSet: 'DEMO',
  onStatus: (s, detail) => { statusEl.textContent = detail ? `${s} (${detail})` : s; statusEl.dataset.status = s; },
});

/** Sets a cell's text; a value that replaces another flashes for a moment (a class added, then
 * removed by a timer: two repaints per change, cheap even on a busy machine). */
export function setCell(td, value, flash) {
  const text = value === null || value === undefined ? '' : value;
  if (td.textContent === text) return;
  const hadValue = td.textContent !== '';
  td.textContent = text;
  if (flash && hadValue) {
    td.classList.add('flash');
    clearTimeout(td.flashTimer);
    td.flashTimer = setTimeout(() => td.classList.remove('flash'), 500);
  }
}

// Stock list: one row per item, built up front so that updates only touch cells.
const stockBody = document.querySelector('#stocks tbody');
const stockRows = STOCKS.map((item) => {
  const tr = document.createElement('tr');
  tr.dataset.item = item;
  for (const f of STOCK_FIELDS) {
    const td = document.createElement('td');
    td.dataset.field = f;
    tr.appendChild(td);
  }
  stockBody.appendChild(tr);
  return tr;
});

client.subscribe({
  mode: 'MERGE', items: STOCKS, fields: STOCK_FIELDS, snapshot: true,
  onUpdate: ({ itemPos, fields, changed }) => {
    const tr = stockRows[itemPos - 1];
    if (!tr) return;
    STOCK_FIELDS.forEach((f, i) => { if (changed.has(f)) setCell(tr.cells[i], fields[f], true); });
    const pct = Number(fields.pct_change);
    tr.cells[3].classList.toggle('up', pct > 0);
    tr.cells[3].classList.toggle('down', pct < 0);
  },
});

// Portfolio: rows added, updated and deleted by key.
const portBody = document.querySelector('#portfolio tbody');
const portRows = new Map();
client.subscribe({
  mode: 'COMMAND', items: ['portfolio1'], fields: ['key', 'command', 'qty', 'price'], snapshot: true,
  onUpdate: ({ fields }) => {
    const key = fields.key;
    if (key === null) return;
    let tr = portRows.get(key);
    if (fields.command === 'DELETE') {
      if (tr) { tr.remove(); portRows.delete(key); }
      return;
    }
    if (!tr) {
      tr = document.createElement('tr');
      tr.dataset.key = key;
      for (let i = 0; i < 3; i++) tr.appendChild(document.createElement('td'));
      tr.cells[0].textContent = key;
      portRows.set(key, tr);
      portBody.appendChild(tr);
    }
    setCell(tr.cells[1], fields.qty, true);
    setCell(tr.cells[2], fields.price, true);
  },
  onClear: () => { portBody.replaceChildren(); portRows.clear(); },
  // Subscribed again on a new session: its snapshot rebuilds the table.
  onSubscribed: () => { portBody.replaceChildren(); portRows.clear(); },
});

// Chat room: every message appended, the oldest dropped past CHAT_KEEP.
const chat = document.getElementById('chat');
client.subscribe({
  mode: 'DISTINCT', items: ['chat_room'], fields: ['message', 'timestamp', 'IP', 'nick'], snapshot: 20,
  onUpdate: ({ fields }) => {
    const li = document.createElement('li');
    const meta = document.createElement('span');
    meta.className = 'meta';
    meta.textContent = `${fields.timestamp || ''} ${fields.nick || 'guest'}`;
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = fields.message || '';
    li.append(meta, text);
    chat.appendChild(li);
    while (chat.children.length > CHAT_KEEP) chat.firstElementChild.remove();
    chat.scrollTop = chat.scrollHeight;
  },
  onClear: () => chat.replaceChildren(),
  onSubscribed: () => chat.replaceChildren(),
});

document.getElementById('chat-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = document.getElementById('chat-text');
  const text = input.value.trim();
  if (text && client.sendMessage(`CHAT|${text}`)) input.value = '';
});

client.connect();
window.addEventListener('pagehide', () => client.disconnect());
// For the browser's developer tools (and the browser test): the page's TLCP client.
window.lsClient = client;
