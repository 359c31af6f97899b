/**
 * The egress allowlist of a place's container (docs/containers.md, "The network"). The container has
 * no network of its own (`--network none`: its loopback alone). Its first process under the init is
 * a bridge, run by the image's `node`: it listens on 127.0.0.1:PROXY_PORT inside and carries each
 * connection to a unix socket of this machine's, mounted read-only. On that socket flume's proxy
 * (proxy-main.ts, one process per container, ended with it) takes HTTP proxy requests, `CONNECT
 * host:port` and plain `GET http://host:port/…`, and opens only those to a host and port the list
 * names; any other is answered 403 and noted in its log. The agent is pointed at the bridge by
 * HTTPS_PROXY and HTTP_PROXY. The same shape as `@anthropic-ai/sandbox-runtime`'s (an HTTP proxy on a
 * socket outside, bridged into a namespace with no network), without its dependencies.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { PlaceContainer } from '../../api/record.js';

/** The port the bridge listens to inside the container, on its own loopback. */
export const PROXY_PORT = 3128;

/** A host and port the container may reach. */
export interface Allowed {
  host: string;
  port: number;
}

/** `host:port` (or `[v6]:port`), a bare host meaning port 443. Undefined for an entry that is not one. */
export function parseAllowed(entry: string): Allowed | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(entry.trim());
  if (!match) return undefined;
  const port = match[3] === undefined ? 443 : Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? match[2]!).toLowerCase(), port };
}

/** True when the list names this host and port. */
export function allows(list: Allowed[], host: string, port: number): boolean {
  const wanted = host.replace(/^\[|\]$/g, '').toLowerCase();
  return list.some((allowed) => allowed.host === wanted && allowed.port === port);
}

/** The folder, mounted read-only inside, that holds the proxy's socket: `<state>/proxies/<container name>`. */
export function proxyDir(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return join(container.home, '..', '..', 'proxies', container.name);
}

/** The proxy's socket in that folder. */
export function proxySocket(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return join(proxyDir(container), 'proxy.sock');
}

/** The proxy's log of what it refused (outside the container): `<state>/proxies/<container name>.log`. */
export function proxyLog(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return `${proxyDir(container)}.log`;
}

/** Where flume tells the proxy the container's init it lives with (`PID START`), once the container is made. */
export function proxyInit(container: Pick<PlaceContainer, 'home' | 'name'>): string {
  return `${proxyDir(container)}.init`;
}

/** What the agent is given inside to go through the bridge. */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url };
}

/** The bridge's program, for `node -e` inside: each connection to 127.0.0.1:PROXY_PORT carried to `socket`. */
export function bridgeProgram(socket: string): string {
  return [
    "const net = require('net');",
    'net.createServer((c) => {',
    `  const u = net.connect(${JSON.stringify(socket)});`,
    "  c.on('error', () => u.destroy()); u.on('error', () => c.destroy());",
    '  c.pipe(u).pipe(c);',
    `}).listen(${PROXY_PORT}, '127.0.0.1');`,
  ].join(' ');
}

/** The most a request's head may be before it is refused. */
const MAX_HEAD = 64 * 1024;

/**
 * The proxy: each connection's first request is read whole (its head), judged against `allow`, and
 * then carried to its target as bytes both ways, or answered 403. `refused` hears each refusal.
 */
export function proxyServer(allow: Allowed[], refused: (line: string) => void = () => undefined): Server {
  return createServer((client) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) answer(client, 431, 'Request Header Fields Too Large');
        return;
      }
      client.off('data', onData);
      client.pause();
      carry(client, head.subarray(0, end).toString('latin1'), head.subarray(end + 4), allow, refused);
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
  });
}

function carry(client: Socket, head: string, rest: Buffer, allow: Allowed[], refused: (line: string) => void): void {
  const [line = '', ...headers] = head.split('\r\n');
  const [method = '', target = '', version = 'HTTP/1.1'] = line.split(' ');
  let host: string;
  let port: number;
  let first: Buffer;
  if (method === 'CONNECT') {
    const at = target.lastIndexOf(':');
    host = target.slice(0, at);
    port = Number(target.slice(at + 1));
    first = rest;
  } else {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return answer(client, 400, 'Bad Request');
    }
    if (url.protocol !== 'http:') return answer(client, 400, 'Bad Request');
    host = url.hostname;
    port = url.port === '' ? 80 : Number(url.port);
    // Sent on as the origin asks it: the path alone, no header meant for the proxy, and one request
    // to the connection (`Connection: close`): a next request on it, to another host, is judged on a
    // connection of its own, never carried to this one's.
    const kept = headers.filter((header) => !/^(proxy-[^:]*|connection|keep-alive):/i.test(header));
    first = Buffer.concat([Buffer.from([`${method} ${url.pathname}${url.search} ${version}`, ...kept, 'Connection: close', '', ''].join('\r\n'), 'latin1'), rest]);
  }
  if (!Number.isInteger(port) || !allows(allow, host, port)) {
    // One line each, in words the agent cannot make into more lines.
    refused(`${new Date().toISOString()} refused ${JSON.stringify(method).slice(1, -1)} ${JSON.stringify(`${host}:${port}`).slice(1, -1)}`.slice(0, 500));
    return answer(client, 403, 'Forbidden');
  }
  const upstream = createConnection({ host: host.replace(/^\[|\]$/g, ''), port });
  let connected = false;
  upstream.on('connect', () => {
    connected = true;
    if (method === 'CONNECT') client.write(`${version} 200 Connection Established\r\n\r\n`);
    if (first.length) upstream.write(first);
    client.pipe(upstream).pipe(client);
    client.resume();
  });
  upstream.on('error', () => (connected ? client.destroy() : answer(client, 502, 'Bad Gateway')));
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
}

function answer(client: Socket, status: number, words: string): void {
  client.end(`HTTP/1.1 ${status} ${words}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}
