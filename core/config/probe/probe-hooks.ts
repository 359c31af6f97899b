/**
 * The config probe's module hooks (registered with `module.register`, so they run in node's hooks
 * thread): every file node's own ES-module loader loads while the probe runs is posted back to the
 * probe, which records it beside what jiti read. Not part of the public API.
 */
import type { MessagePort } from 'node:worker_threads';

let port: MessagePort | undefined;

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
  // The probe asks once all is loaded; the answer comes after every file posted before it.
  port.on('message', (message) => {
    if (message === 'flush') port!.postMessage('flushed');
  });
  port.unref();
}

export async function load(url: string, context: unknown, next: (url: string, context: unknown) => Promise<unknown>): Promise<unknown> {
  if (url.startsWith('file:')) port?.postMessage(url);
  return next(url, context);
}
