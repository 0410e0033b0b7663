// How the client reaches BrowserAI through an HTTP proxy (issue 9).
//
// axios 1.x speaks plain HTTP to an HTTPS_PROXY with the absolute https:// URL, so the proxy
// sees the API token and every request body. The client therefore turns axios's proxy handling
// off (`proxy: false`) and hands axios agents of its own: for an https base URL behind a proxy,
// Node's https.Agent with `proxyEnv` (Node.js 24.5+), which opens an HTTP CONNECT tunnel
// and speaks TLS to BrowserAI through it, so the proxy relays only ciphertext; the proxy's
// credentials go in `Proxy-Authorization` on the CONNECT alone.
//
// The route is decided once per client, for its base URL, with our own NO_PROXY matching (Node's
// matches `example.com` only exactly and `.example.com` without a label boundary):
//   https base URL: https_proxy, else HTTPS_PROXY;
//   http base URL (the emulator): http_proxy, else HTTP_PROXY, as an ordinary proxied HTTP
//     request (absolute URL). Plain HTTP is readable by the proxy whether it is tunnelled or
//     not, so a tunnel would protect nothing and many proxies refuse CONNECT to ports other
//     than 443; put the emulator's host in NO_PROXY to keep its traffic off the proxy;
//   no_proxy, else NO_PROXY: comma list of `*`, hosts, domains (`example.com`, `.example.com`
//     and `*.example.com` all match example.com and its subdomains), `host:port`, IP addresses
//     and CIDR ranges (`10.0.0.0/8`).
// Redirects are never followed (client.ts), so no request leaves the route chosen for the base
// URL, e.g. from https through the proxy's tunnel to a plain http host.
//
// Failures: an unreachable proxy, or a CONNECT answered with anything but 2xx, happen before a
// byte reaches BrowserAI and become never-sent NetworkErrors naming the proxy's host:port (never
// its credentials). A proxy that accepts the connection but never answers the CONNECT is given
// up on after the agent's 5 s socket timeout, which axios reports as its own timeout: a Timeout
// that may have reached BrowserAI (the cautious reading), and request timeouts under 5 s do not
// shorten that wait. Needs Node.js's built-in proxy support (24.5+); without it a client with a
// proxy configured refuses to start rather than connect around the proxy.

import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';

/** The proxy a client uses, without its credentials: safe to put in errors and logs. */
export interface ProxyRoute {
  /** `host:port` of the proxy. */
  readonly label: string;
  /** Where it came from: `HTTPS_PROXY`, `http_proxy`, … or `the proxy option`. */
  readonly source: string;
  /** `host:port` the tunnel is opened to (the base URL's). */
  readonly target: string;
}

export interface Transport {
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  /** Undefined when the base URL is reached directly. */
  proxy?: ProxyRoute;
}

// Node's own global agents' settings, which axios used before the client brought its own agents.
// `proxyEnv: {}` keeps a direct agent direct even when NODE_USE_ENV_PROXY is set.
const AGENT_OPTIONS = { keepAlive: true, scheduling: 'lifo', timeout: 5000, proxyEnv: {} } as const;

/**
 * The agents for a client of `baseUrl`. `option` is BrowserAIClientOptions.proxy: a proxy URL
 * (used as given, NO_PROXY not consulted), `false` (never a proxy), or undefined (from `env`).
 * Throws a TypeError, naming the variable but never its value, for a proxy URL it cannot use.
 */
export function createTransport(
  baseUrl: string,
  option: string | false | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Transport {
  const direct = { httpAgent: new http.Agent(AGENT_OPTIONS), httpsAgent: new https.Agent(AGENT_OPTIONS) };
  // An unusable base URL fails each request, unsent (ERR_INVALID_URL), as it always has.
  if (!URL.canParse(baseUrl)) return direct;
  const target = new URL(baseUrl);
  const chosen =
    option === false
      ? undefined
      : option !== undefined
        ? { value: option, source: 'the proxy option' }
        : proxyFromEnv(target, env);
  if (!chosen) return direct;
  const proxyUrl = parseProxyUrl(chosen.value, chosen.source);
  const proxy: ProxyRoute = { label: hostPort(proxyUrl), source: chosen.source, target: hostPort(target) };
  const transport =
    target.protocol === 'https:'
      ? {
          ...direct,
          httpsAgent: new https.Agent({ ...AGENT_OPTIONS, proxyEnv: { HTTPS_PROXY: proxyUrl.href } }),
          proxy,
        }
      : { ...direct, httpAgent: new http.Agent({ ...AGENT_OPTIONS, proxyEnv: { HTTP_PROXY: proxyUrl.href } }), proxy };
  // A Node.js without built-in proxy support ignores proxyEnv and would connect directly.
  if (!usesProxy(target.protocol === 'https:' ? transport.httpsAgent : transport.httpAgent)) {
    throw new TypeError(
      `${chosen.source} is set, but Node.js ${process.version} cannot use a proxy by itself: run BrowserAIClient on Node.js 24.5 or later.`,
    );
  }
  return transport;
}

/** Whether Node.js parsed a proxy for this agent (its internal kProxyConfig, set from `proxyEnv`). */
function usesProxy(agent: http.Agent): boolean {
  const symbol = Object.getOwnPropertySymbols(agent).find((s) => s.description === 'kProxyConfig');
  return symbol !== undefined && (agent as unknown as Record<symbol, unknown>)[symbol] != null;
}

/** The proxy variable that applies to `target`, or undefined when there is none or NO_PROXY exempts it. */
export function proxyFromEnv(target: URL, env: NodeJS.ProcessEnv): { value: string; source: string } | undefined {
  const names =
    target.protocol === 'https:'
      ? ['https_proxy', 'HTTPS_PROXY']
      : target.protocol === 'http:'
        ? ['http_proxy', 'HTTP_PROXY']
        : [];
  const source = names.find((name) => env[name]?.trim());
  if (!source) return undefined;
  if (bypassesProxy(target, env.no_proxy?.trim() ? env.no_proxy : env.NO_PROXY)) return undefined;
  return { value: env[source]!.trim(), source };
}

/** Whether a NO_PROXY list exempts `target` from the proxy. */
export function bypassesProxy(target: URL, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = bare(target.hostname);
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const hostIsIp = isIP(host) !== 0;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (hostIsIp && inCidr(host, entry)) return true;
      continue;
    }
    // `[v6]:port`, `host:port`; a bare IPv6 address has several colons and no port.
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const colon = entry.indexOf(':');
    let name = bracketed ? bracketed[1] : colon > 0 && colon === entry.lastIndexOf(':') ? entry.slice(0, colon) : entry;
    const entryPort = bracketed
      ? bracketed[2]
      : colon > 0 && colon === entry.lastIndexOf(':')
        ? entry.slice(colon + 1)
        : undefined;
    if (entryPort && entryPort !== port) continue;
    name = bare(name.replace(/^\*?\./, ''));
    if (name === '') continue;
    if (host === name) return true;
    // Only names have subdomains: `0.0.1` must not exempt 127.0.0.1.
    if (!hostIsIp && isIP(name) === 0 && host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** What went wrong when a failure is the proxy's (unreachable, or it would not open the tunnel); undefined otherwise. */
export function proxyFailure(err: unknown, proxy: ProxyRoute): { detail: string; advice: string } | undefined {
  const e = err as (NodeJS.ErrnoException & { statusCode?: unknown }) | undefined;
  const code = e?.code;
  if (code === 'ERR_PROXY_TUNNEL') {
    // Node raises it only before the request is written: a non-2xx answer to the CONNECT, the
    // proxy closing the connection, or no answer within the agent's 5 s.
    const status = typeof e?.statusCode === 'number' ? e.statusCode : undefined;
    if (status === undefined) {
      return {
        detail: `the proxy ${proxy.label} did not open a tunnel to ${proxy.target}`,
        advice: `Check the proxy in ${proxy.source} and the network.`,
      };
    }
    const advice =
      status === 407
        ? `The proxy wants credentials: check the user and password in ${proxy.source} (http://user:password@host:port, percent-encoded).`
        : status === 403
          ? `The proxy does not allow tunnels to ${proxy.target}: check its access rules, or exempt the host with NO_PROXY.`
          : status >= 500
            ? `The proxy could not reach ${proxy.target}: check BROWSERAI_BASE_URL and the proxy's own network.`
            : `Check the proxy in ${proxy.source}.`;
    return { detail: `the proxy ${proxy.label} refused the tunnel to ${proxy.target} with ${status}`, advice };
  }
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH'
  ) {
    // Through a proxy the client connects to nothing else, and the proxy resolves BrowserAI's name.
    return {
      detail: `could not reach the proxy ${proxy.label} (${code})`,
      advice: `Check the proxy in ${proxy.source} and the network.`,
    };
  }
  return undefined;
}

function parseProxyUrl(value: string, source: string): URL {
  // A bare `host:port` means an http proxy, as for curl.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new TypeError(
      `${source} is not a usable proxy URL: write it as http://host:port (or http://user:password@host:port).`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(
      `${source} names a ${url.protocol.slice(0, -1)} proxy; BrowserAIClient supports only http:// and https:// proxies.`,
    );
  }
  if (url.hostname === '') throw new TypeError(`${source} has no proxy host: write it as http://host:port.`);
  return url;
}

function hostPort(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/** Lower case, without IPv6 brackets or a trailing dot. */
function bare(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function inCidr(ip: string, cidr: string): boolean {
  const [address, bits] = cidr.split('/');
  const type = isIP(address);
  const prefix = Number(bits);
  if (type === 0 || !/^\d+$/.test(bits ?? '') || prefix > (type === 4 ? 32 : 128)) return false;
  const list = new BlockList();
  list.addSubnet(address, prefix, type === 4 ? 'ipv4' : 'ipv6');
  return list.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
}
