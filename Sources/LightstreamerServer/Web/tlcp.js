// A small TLCP 2.5 client over WebSocket for the server's own pages (docs/protocol/TLCP.md).
// One session at a time; subscriptions are replayed on a new session after a reconnection.
// Diffs (^P, ^T) are turned off at create (LS_supported_diffs empty), so values arrive whole.

const CLIENT_ID = 'mgQkwtwdysogQz2BJ4Ji%20kOj2Bg';
const SUBPROTOCOL = 'TLCP-2.5.0.lightstreamer.com';
const MAX_LINE = 1 << 20;

/** Percent-decoding of response arguments and U values (UTF-8 octets; '+' stays '+'). */
export function percentDecode(s) {
  if (s.indexOf('%') < 0) return s;
  try { return decodeURIComponent(s); } catch (e) { return s; }
}

/** Percent-encoding of request values: everything but unreserved characters. */
function enc(s) { return encodeURIComponent(String(s)); }

/**
 * Decodes the values of a U line against the item's previous values (§1.6).
 * Returns {values, changed} or null when the token count does not match `fieldCount`.
 */
export function decodeUpdate(text, previous, fieldCount) {
  const values = previous ? previous.slice() : new Array(fieldCount).fill(null);
  const changed = new Array(fieldCount).fill(false);
  const tokens = text.split('|');
  let pos = 0;
  for (const t of tokens) {
    if (pos >= fieldCount) return null;
    if (t === '') { pos += 1; continue; }
    if (t === '#') { values[pos] = null; changed[pos] = true; pos += 1; continue; }
    if (t === '$') { values[pos] = ''; changed[pos] = true; pos += 1; continue; }
    if (t[0] === '^') {
      const n = Number(t.slice(1));
      if (!Number.isInteger(n) || n < 1) return null; // ^P/^T: not requested
      pos += n;
      continue;
    }
    const v = percentDecode(t);
    changed[pos] = values[pos] !== v;
    values[pos] = v;
    pos += 1;
  }
  return pos === fieldCount ? { values, changed } : null;
}

/** Splits a response line into its tag and at most `count` arguments (the last keeps commas). */
function args(line, count) {
  const out = [];
  let rest = line;
  for (let i = 0; i < count; i++) {
    const c = rest.indexOf(',');
    if (c < 0 || i === count - 1) { out.push(rest); rest = null; break; }
    out.push(rest.slice(0, c));
    rest = rest.slice(c + 1);
  }
  return out;
}

export class TlcpClient {
  /**
   * options: { adapterSet, user, password, credentials (async () => {user, password}, called
   *            before each session), url (default: <page dir>/lightstreamer),
   *            onStatus(status, detail), onServerError(tag, code, message) }
   */
  constructor(options) {
    this.options = options;
    const base = new URL('.', window.location.href);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    this.url = options.url || base.href + 'lightstreamer';
    this.subs = new Map();      // subId -> subscription
    this.nextSubId = 1;
    this.nextReqId = 1;
    this.nextMsgProg = 1;
    this.ws = null;
    this.status = 'DISCONNECTED';
    this.wanted = false;
    this.retryDelay = 1000;
    this.keepalive = 5000;
    this.watchdog = null;
    this.retryTimer = null;
    this.sessionId = null;
  }

  setStatus(s, detail) {
    this.status = s;
    if (this.options.onStatus) this.options.onStatus(s, detail || '');
  }

  connect() {
    this.wanted = true;
    if (!this.ws) this.open();
  }

  disconnect() {
    this.wanted = false;
    clearTimeout(this.retryTimer);
    clearTimeout(this.watchdog);
    if (this.ws) {
      this.sendRequest('control', { LS_reqId: this.nextReqId++, LS_op: 'destroy', LS_close_socket: 'true', LS_cause: 'api' });
      this.ws.close(1000);
      this.ws = null;
    }
    this.setStatus('DISCONNECTED');
  }

  open() {
    this.setStatus('CONNECTING');
    let ws;
    try { ws = new WebSocket(this.url, SUBPROTOCOL); } catch (e) { this.scheduleRetry(String(e)); return; }
    this.ws = ws;
    ws.onopen = async () => {
      // Credentials may be fetched afresh for each session (the dashboard's short-lived token).
      let creds = { user: this.options.user, password: this.options.password };
      if (this.options.credentials) {
        try { creds = (await this.options.credentials()) || {}; } catch (e) { creds = {}; }
      }
      if (ws !== this.ws) return;
      const p = { LS_cid: CLIENT_ID, LS_adapter_set: this.options.adapterSet || 'DEFAULT', LS_send_sync: 'false',
                  LS_supported_diffs: '', LS_keepalive_millis: '5000', LS_cause: 'api' };
      if (creds.user) p.LS_user = creds.user;
      if (creds.password) p.LS_password = creds.password;
      ws.send('wsok');
      this.sendRequest('create_session', p);
      this.armWatchdog();
    };
    ws.onmessage = (ev) => {
      if (ws !== this.ws) return;
      this.armWatchdog();
      if (typeof ev.data !== 'string' || ev.data.length > MAX_LINE) return;
      for (const line of ev.data.split('\r\n')) if (line) this.onLine(line);
    };
    ws.onclose = () => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.sessionId = null;
      clearTimeout(this.watchdog);
      if (this.wanted) this.scheduleRetry('connection closed');
    };
    ws.onerror = () => {};
  }

  scheduleRetry(detail) {
    this.setStatus('RETRYING', detail);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => { if (this.wanted && !this.ws) this.open(); }, this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, 15000);
  }

  /** Silence beyond keepalive + 3 s: the stream is stalled, start again. */
  armWatchdog() {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (this.ws) { const ws = this.ws; this.ws = null; ws.close(); }
      if (this.wanted) this.scheduleRetry('stalled');
    }, this.keepalive + 3000);
  }

  sendRequest(name, params) {
    if (!this.ws || this.ws.readyState !== 1) return false;
    const body = Object.entries(params).map(([k, v]) => `${k}=${enc(v)}`).join('&');
    this.ws.send(`${name}\r\n${body}`);
    return true;
  }

  onLine(line) {
    const tag = line.split(',', 1)[0];
    switch (tag) {
      case 'CONOK': {
        const [, sid, , keepalive] = args(line, 5);
        this.sessionId = sid;
        const k = Number(keepalive);
        if (Number.isFinite(k) && k > 0) this.keepalive = Math.min(k, 60000);
        this.retryDelay = 1000;
        this.setStatus('CONNECTED');
        for (const sub of this.subs.values()) this.sendAdd(sub);
        break;
      }
      case 'CONERR': case 'END': {
        const [, code, msg] = args(line, 3);
        const c = Number(code);
        if (this.options.onServerError) this.options.onServerError(tag, c, percentDecode(msg || ''));
        const ws = this.ws;
        this.ws = null;
        this.sessionId = null;
        if (ws) ws.close(1000);
        // Refused credentials or an administrator's END: stop; anything else: try again.
        if (c === 1 || c <= 0 || c === 32 || c === 2) { this.wanted = false; this.setStatus('DISCONNECTED', `${tag} ${c} ${percentDecode(msg || '')}`); }
        else if (this.wanted) this.scheduleRetry(`${tag} ${c}`);
        break;
      }
      case 'LOOP':
        // Rebind on the same socket (the session goes on).
        this.sendRequest('bind_session', { LS_session: this.sessionId, LS_send_sync: 'false', LS_cause: 'ws.loop' });
        break;
      case 'SUBOK': case 'SUBCMD': {
        const a = args(line, tag === 'SUBOK' ? 4 : 6);
        const sub = this.subs.get(Number(a[1]));
        if (!sub) break;
        sub.fieldCount = Number(a[3]);
        if (tag === 'SUBCMD') { sub.keyPos = Number(a[4]) - 1; sub.cmdPos = Number(a[5]) - 1; }
        sub.last = new Map();
        if (sub.onSubscribed) sub.onSubscribed();
        break;
      }
      case 'U': {
        const [, subId, item, values] = args(line, 4);
        const sub = this.subs.get(Number(subId));
        if (!sub || !sub.fieldCount) break;
        const pos = Number(item);
        const decoded = decodeUpdate(values, sub.last.get(pos), sub.fieldCount);
        if (!decoded) { console.warn('TLCP: bad update', line); break; }
        sub.last.set(pos, decoded.values);
        const fields = {};
        sub.fields.forEach((f, i) => { fields[f] = decoded.values[i]; });
        const changed = new Set(sub.fields.filter((f, i) => decoded.changed[i]));
        sub.onUpdate({ itemPos: pos, itemName: sub.items[pos - 1], fields, changed });
        break;
      }
      case 'CS': {
        const [, subId, item] = args(line, 3);
        const sub = this.subs.get(Number(subId));
        if (sub) { sub.last.delete(Number(item)); if (sub.onClear) sub.onClear(Number(item), sub.items[Number(item) - 1]); }
        break;
      }
      case 'OV': {
        const [, subId, item, lost] = args(line, 4);
        const sub = this.subs.get(Number(subId));
        if (sub && sub.onLost) sub.onLost(Number(item), Number(lost));
        break;
      }
      case 'REQERR': {
        const [, reqId, code, msg] = args(line, 4);
        console.warn('TLCP REQERR', reqId, code, percentDecode(msg || ''));
        for (const sub of this.subs.values()) {
          if (sub.reqId === Number(reqId) && sub.onError) sub.onError(Number(code), percentDecode(msg || ''));
        }
        break;
      }
      case 'MSGFAIL': {
        const [, , , code, msg] = args(line, 5);
        if (this.options.onMessageError) this.options.onMessageError(Number(code), percentDecode(msg || ''));
        break;
      }
      default:
        // PROBE, WSOK, REQOK, CONF, EOS, UNSUB, SYNC, CONS, CLIENTIP, SERVNAME, NOOP, PROG, MSGDONE:
        // nothing to do for these pages (the watchdog was re-armed by the message itself).
        break;
    }
  }

  /**
   * spec: { mode, items: [names], fields: [names], dataAdapter, snapshot (true/false/n),
   *         maxFrequency, onUpdate({itemPos, itemName, fields, changed}), onClear, onLost, onError }
   */
  subscribe(spec) {
    const sub = Object.assign({ id: this.nextSubId++, last: new Map() }, spec);
    this.subs.set(sub.id, sub);
    if (this.sessionId) this.sendAdd(sub);
    return sub;
  }

  unsubscribe(sub) {
    if (!this.subs.delete(sub.id)) return;
    if (this.sessionId) this.sendRequest('control', { LS_reqId: this.nextReqId++, LS_op: 'delete', LS_subId: sub.id });
  }

  sendAdd(sub) {
    sub.fieldCount = 0;
    sub.reqId = this.nextReqId++;
    const p = { LS_reqId: sub.reqId, LS_op: 'add', LS_subId: sub.id, LS_mode: sub.mode,
                LS_group: sub.items.join(' '), LS_schema: sub.fields.join(' ') };
    if (sub.dataAdapter) p.LS_data_adapter = sub.dataAdapter;
    if (sub.snapshot !== undefined) p.LS_snapshot = String(sub.snapshot);
    if (sub.maxFrequency !== undefined) p.LS_requested_max_frequency = String(sub.maxFrequency);
    this.sendRequest('control', p);
  }

  /** Sends a message (no outcome requested); false when not connected. */
  sendMessage(text) {
    if (!this.sessionId) return false;
    return this.sendRequest('msg', { LS_reqId: this.nextReqId++, LS_message: text, LS_outcome: 'false', LS_ack: 'false' });
  }
}
