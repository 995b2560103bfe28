// The Node rows of the client table: GET each URL through robotsgate and
// print its status code (one line per URL).
//
//   node get.mjs MODE URL...
//
// MODE:
//   undici-proxyagent  undici request() with new ProxyAgent(PROXY_URL)
//   undici-env         undici request() with new EnvHttpProxyAgent()
//                      (reads http_proxy/HTTP_PROXY, https_proxy/HTTPS_PROXY, no_proxy)
//   fetch-dispatcher   the built-in fetch after setGlobalDispatcher(new EnvHttpProxyAgent())
//   https-proxy-agent  http.get / https.get with new HttpsProxyAgent(PROXY_URL)
//   fetch-builtin      the built-in fetch alone (ignores every proxy variable)
//
// robotsgate's CA is trusted through NODE_EXTRA_CA_CERTS.
import http from 'node:http';
import https from 'node:https';
import { ProxyAgent, EnvHttpProxyAgent, request, setGlobalDispatcher } from 'undici';
import { HttpsProxyAgent } from 'https-proxy-agent';

const [mode, ...urls] = process.argv.slice(2);

async function undiciGet(url, dispatcher) {
  const { statusCode, body } = await request(url, { dispatcher });
  await body.dump();
  return statusCode;
}

async function fetchGet(url) {
  const resp = await fetch(url);
  await resp.arrayBuffer();
  return resp.status;
}

function agentGet(url) {
  const agent = new HttpsProxyAgent(process.env.PROXY_URL);
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    mod.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

// Each mode returns the function that GETs one URL.
const modes = {
  'undici-proxyagent': () => { const d = new ProxyAgent(process.env.PROXY_URL); return (url) => undiciGet(url, d); },
  'undici-env': () => { const d = new EnvHttpProxyAgent(); return (url) => undiciGet(url, d); },
  'fetch-dispatcher': () => { setGlobalDispatcher(new EnvHttpProxyAgent()); return fetchGet; },
  'https-proxy-agent': () => agentGet,
  'fetch-builtin': () => fetchGet,
};

if (!modes[mode] || urls.length === 0) {
  console.error(`usage: node get.mjs (${Object.keys(modes).join('|')}) URL...`);
  process.exit(2);
}
try {
  const get = modes[mode]();
  for (const url of urls) {
    console.log(await get(url));
  }
  process.exit(0);
} catch (err) {
  console.error(`node ${mode}: ${err.cause ? `${err.message}: ${err.cause.message ?? err.cause}` : err.message}`);
  process.exit(1);
}
