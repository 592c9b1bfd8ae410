// A page that reads its flags from an OFREP server with OpenFeature's web
// SDK and OFREP web provider, and shows them.
//
// Its query says where the server is, which flags to show and who the user
// is:
//
//   index.html?ofrep=http://127.0.0.1:8016&flag=new-checkout:boolean
//     &flag=checkout-banner:string&targetingKey=user-42&email=ada@example.com
//
// ofrep is the server's base URL; each flag is KEY:TYPE, TYPE one of
// boolean, string, number or object; every other parameter is an attribute
// of the evaluation context. The provider learns of changes only from the
// server's event stream: it does not poll, keeps nothing in local storage
// and does not fetch again when the page becomes visible.
//
// What it shows:
//   #status        starting, then ready, or "error: " and why
//   #flags tbody   one row per flag: key, value (as JSON), variant, reason,
//                  error ("" when none)
//   #events        one item per provider event after readiness:
//                  "PROVIDER_CONFIGURATION_CHANGED: key,key", "PROVIDER_STALE:
//                  message", "PROVIDER_ERROR: message"
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

const defaults = { boolean: false, string: '', number: 0, object: {} };

const query = new URLSearchParams(location.search);
const baseUrl = query.get('ofrep');
const flags = query.getAll('flag').map((f) => {
  const i = f.lastIndexOf(':');
  return { key: f.slice(0, i), type: f.slice(i + 1) };
});
const context = {};
for (const [name, value] of query) {
  if (name !== 'ofrep' && name !== 'flag') {
    context[name] = value;
  }
}

const statusEl = document.getElementById('status');
const rows = document.querySelector('#flags tbody');
const eventsEl = document.getElementById('events');
document.getElementById('user').textContent = context.targetingKey || '(anonymous)';

const client = OpenFeature.getClient();

function details(flag) {
  const d = defaults[flag.type];
  switch (flag.type) {
    case 'boolean':
      return client.getBooleanDetails(flag.key, d);
    case 'string':
      return client.getStringDetails(flag.key, d);
    case 'number':
      return client.getNumberDetails(flag.key, d);
    case 'object':
      return client.getObjectDetails(flag.key, d);
    default:
      throw new Error(`flag ${flag.key}: unknown type ${flag.type}`);
  }
}

function cell(row, name, text) {
  const td = document.createElement('td');
  td.className = name;
  td.textContent = text;
  row.appendChild(td);
}

function render() {
  const fresh = [];
  for (const flag of flags) {
    const d = details(flag);
    const row = document.createElement('tr');
    row.dataset.key = flag.key;
    cell(row, 'key', flag.key);
    cell(row, 'value', JSON.stringify(d.value));
    cell(row, 'variant', d.variant ?? '');
    cell(row, 'reason', d.reason ?? '');
    cell(row, 'error', d.errorCode ? `${d.errorCode}: ${d.errorMessage ?? ''}` : '');
    fresh.push(row);
  }
  rows.replaceChildren(...fresh);
}

function record(text) {
  const li = document.createElement('li');
  li.textContent = text;
  eventsEl.appendChild(li);
}

async function start() {
  if (!baseUrl) {
    throw new Error('no ofrep parameter: the page needs the base URL of the OFREP server');
  }
  const provider = new OFREPWebProvider({
    baseUrl,
    changeDetection: 'sse',
    pollInterval: 0,
    disableVisibilityRefresh: true,
    cacheMode: 'disabled',
    timeoutMs: 5000,
  });
  await OpenFeature.setContext(context);
  await OpenFeature.setProviderAndWait(provider);
  client.addHandler(ProviderEvents.ConfigurationChanged, (ev) => {
    record(`${ProviderEvents.ConfigurationChanged}: ${(ev?.flagsChanged ?? []).join(',')}`);
    render();
  });
  client.addHandler(ProviderEvents.Stale, (ev) => record(`${ProviderEvents.Stale}: ${ev?.message ?? ''}`));
  client.addHandler(ProviderEvents.Error, (ev) => record(`${ProviderEvents.Error}: ${ev?.message ?? ''}`));
}

start().then(
  () => {
    render();
    statusEl.textContent = 'ready';
  },
  (err) => {
    render();
    statusEl.textContent = `error: ${err?.message ?? err}`;
  },
);
