/**
 * The printed host: no pane. flume hands the operator the exact command (with its session id and its
 * prompt) to run where they like, then confirms and reads the transcript exactly as for a pane.
 */
import { definePaneHost, definePlugin, FlumeError } from '../core/index.js';

/** A pane host that runs nothing: the command is shown, and the operator runs it. */
export const printedHost = definePaneHost({
  key: 'printed',
  async available() {
    return true;
  },
  async open() {
    return {};
  },
  async capture() {
    return undefined;
  },
  async type() {
    throw new FlumeError('AGENT_NOT_UP', 'An agent started as a printed command has no pane flume can type into.', {
      fix: 'Type into the terminal where the command runs.',
    });
  },
  async keys() {
    throw new FlumeError('AGENT_NOT_UP', 'An agent started as a printed command has no pane flume can press keys in.', {
      fix: 'Use the terminal where the command runs.',
    });
  },
  async alive() {
    return false;
  },
  async close() {},
});

/** Registers the printed host. */
export const printedHostPlugin = () =>
  definePlugin({ name: 'flume:host:printed', apply: (flume) => flume.hosts.register('flume:host:printed', printedHost) });
