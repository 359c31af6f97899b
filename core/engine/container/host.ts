/**
 * The container pane host (key `container`): an agent of a place in a container runs in a pane of
 * the host the stage chose (tmux, herdr), whose program is `<engine> exec -it <container> <agent>`.
 * Its pane ids carry the container and the pane they wrap (`<engine>|<container>|<host>|<pane>`), so
 * everything later asked of the pane (type, keys, look, attach) goes to that pane as ever, and
 * `close` ends what runs in the container too: killing the exec client alone leaves the agent
 * running inside. A pane is opened only by a stage start, through `containerOpener`: `auto` never
 * chooses this host. The built-in preset registers it (agents/index.ts).
 */
import { flumeError } from '../../api/errors.js';
import type { Flume } from '../../api/plugin.js';
import type { PaneHost, PaneLook, PaneSpec } from '../../api/pane-host.js';
import { run } from '../../support/exec.js';
import { gitIdentity } from '../../support/git.js';
import { proxyEnvironment } from './proxy.js';
import { allowlist, endInside, execCommand, insidePids, insidePidsOf, makeContainer, throwawayCommand, type ContainerPlace, type ContainerSpec, type EngineName } from './engine.js';
import { insideEnvironment } from '../../drivers/container-env.js';

/** The key of the container host. */
export const CONTAINER_HOST = 'container';

/** A container pane id read back: the engine and container, and the pane it wraps on its own host. */
export interface ContainerPane {
  engine: EngineName;
  name: string;
  host: string;
  pane: string;
}

/** The pane id of a pane `pane` of host `host` whose program runs in container `name`. */
export function containerPaneId(engine: EngineName, name: string, host: string, pane: string): string {
  return [engine, name, host, pane].join('|');
}

/** A container pane id read back; undefined for an id that is not one. */
export function readContainerPane(id: string): ContainerPane | undefined {
  const [engine, name, host, ...rest] = id.split('|');
  if ((engine !== 'podman' && engine !== 'docker') || !name || !host || rest.length === 0) return undefined;
  return { engine, name, host, pane: rest.join('|') };
}

/** The registered host: every question of a container pane, put to the pane it wraps. */
export function containerHost(flume: Pick<Flume, 'hosts'>): PaneHost {
  const inner = (id: string): { host: PaneHost; pane: string; at: ContainerPane } => {
    const at = readContainerPane(id);
    const host = at ? flume.hosts.get(at.host) : undefined;
    if (!at || !host) throw new Error(`not a container pane of a host here: ${id}`);
    return { host, pane: at.pane, at };
  };
  const absent = (id: string) => {
    const at = readContainerPane(id);
    return !at || !flume.hosts.get(at.host);
  };
  return {
    key: CONTAINER_HOST,
    canType: true,
    priority: -1,
    async available() {
      return false;
    },
    async open() {
      throw flumeError('NO_PANE_HOST', { host: CONTAINER_HOST }, { details: { host: CONTAINER_HOST } });
    },
    async identity(id) {
      if (absent(id)) return undefined;
      const { host, pane } = inner(id);
      return host.identity(pane);
    },
    async capture(id, options) {
      if (absent(id)) return undefined;
      const { host, pane } = inner(id);
      return host.capture(pane, options);
    },
    async type(id, text, options) {
      const { host, pane } = inner(id);
      return host.type(pane, text, options);
    },
    async keys(id, keys) {
      const { host, pane } = inner(id);
      return host.keys(pane, keys);
    },
    async alive(id) {
      const at = readContainerPane(id);
      if (!at) return false;
      const host = flume.hosts.get(at.host);
      return (host ? await host.alive(at.pane) : false) || (await runsInside(at));
    },
    async look(id): Promise<PaneLook | undefined> {
      if (absent(id)) return undefined;
      const { host, pane, at } = inner(id);
      const look = host.look ? await host.look(pane) : await lookWithout(host, pane);
      return look && !look.alive && (await runsInside(at)) ? { ...look, alive: true } : look;
    },
    attach(id) {
      if (absent(id)) return undefined;
      const { host, pane } = inner(id);
      return host.attach?.(pane);
    },
    async close(id) {
      const at = readContainerPane(id);
      if (!at) return;
      const host = flume.hosts.get(at.host);
      // What runs in the container first (the exec client then ends with its program), then the
      // pane: the agent never reads ended while its program still runs inside.
      await endInside(at.engine, at.name);
      if (host) await host.close(at.pane);
    },
    async lookMany(ids) {
      const found = new Map<string, PaneLook>();
      const byHost = new Map<string, string[]>();
      for (const id of ids) {
        const at = readContainerPane(id);
        if (at && flume.hosts.get(at.host)) byHost.set(at.host, [...(byHost.get(at.host) ?? []), id]);
      }
      for (const [key, group] of byHost) {
        const host = flume.hosts.get(key)!;
        const panes = group.map((id) => readContainerPane(id)!.pane);
        const looks = host.lookMany ? await host.lookMany(panes) : undefined;
        const seen = new Map<string, PaneLook>();
        for (const id of group) {
          const look = looks ? looks.get(readContainerPane(id)!.pane) : await this.look!(id);
          if (look) seen.set(id, look);
        }
        // A pane seen ended whose agent runs on inside is alive: one question per engine for all of them.
        const ended = [...seen].filter(([, look]) => !look.alive).map(([id]) => readContainerPane(id)!);
        for (const engine of new Set(ended.map((at) => at.engine))) {
          const pids = await insidePidsOf(engine, ended.filter((at) => at.engine === engine).map((at) => at.name));
          for (const at of ended.filter((one) => one.engine === engine)) {
            const id = containerPaneId(at.engine, at.name, at.host, at.pane);
            const inside = pids.get(at.name);
            if (inside === undefined || inside.length > 0) seen.set(id, { ...seen.get(id)!, alive: true });
          }
        }
        for (const [id, look] of seen) found.set(id, look);
      }
      return found;
    },
  };
}

/**
 * True while anything of an agent runs in the container, its pane there or not: an exec'd program
 * whose client (the pane's) was killed runs on inside, and is the agent still. A container the engine
 * does not answer for is read as running something: never an agent read ended that may not be.
 */
async function runsInside(at: ContainerPane): Promise<boolean> {
  const pids = await insidePids(at.engine, at.name);
  return pids === undefined || pids.length > 0;
}

/** A look at a pane of a host that has no `look` of its own. */
async function lookWithout(host: PaneHost, pane: string): Promise<PaneLook> {
  const identity = await host.identity(pane);
  const alive = await host.alive(pane);
  const screen = alive ? await host.capture(pane) : undefined;
  return { ...(identity !== undefined ? { identity } : {}), alive, ...(screen !== undefined ? { screen } : {}) };
}

/**
 * The host a stage of a place in a container starts on: `open` makes the place's container afresh
 * (engine.ts `makeContainer`) and opens a pane of `host` whose program is the agent's, exec'd in the container with
 * the agent's environment; the pane's own program (the engine's client) gets `clientEnv`.
 */
export function containerOpener(host: PaneHost, spec: ContainerSpec, place: ContainerPlace, clientEnv: Record<string, string>, options: { plan?: boolean } = {}): PaneHost {
  if (options.plan) {
    // A dry run makes nothing: what the driver asks of the image runs in a container removed after.
    return {
      ...containerHostLike(host),
      async run(argv, env) {
        const command = throwawayCommand(spec, { env: insideEnvironment(spec, env), argv });
        const [file, ...args] = command.argv;
        return run(file!, args, { env: { ...clientEnv, ...command.env }, clean: true, timeoutMs: 60_000 });
      },
      async open() {
        throw flumeError('NO_PANE_HOST', { host: CONTAINER_HOST }, { details: { host: CONTAINER_HOST } });
      },
    };
  }
  // Made (or found) once for the start, from now on, while the driver prepares: its checks and the
  // pane then ask nothing more of it.
  const made = makeContainer(spec, place);
  made.catch(() => undefined);
  const makeContainerOnce = (_spec: ContainerSpec, _place: ContainerPlace) => made;
  // The agent commits as this machine's user does here (their global config is not inside), given
  // as git's variables: nothing is written in any config. What the agent's environment sets is kept.
  const identity = gitIdentity(place.path, clientEnv);
  identity.catch(() => undefined);
  // Under an allowlist, the way out is the proxy's bridge (proxy.ts): the agent is pointed at it.
  const proxy = allowlist(spec) ? proxyEnvironment() : {};
  const inside = async (env: Record<string, string>) => ({ ...(await identity.catch(() => ({}))), ...insideEnvironment(spec, env), ...proxy });
  return {
    ...containerHostLike(host),
    async run(argv, env) {
      const name = await makeContainerOnce(spec, place);
      const command = execCommand(spec, name, { cwd: place.path, env: await inside(env), argv });
      const [file, ...args] = command.argv.filter((arg) => arg !== '-it');
      return run(file!, args, { env: { ...clientEnv, ...command.env }, clean: true, timeoutMs: 60_000 });
    },
    async open(pane: PaneSpec) {
      const name = await makeContainerOnce(spec, place);
      const command = execCommand(spec, name, { cwd: pane.cwd, env: await inside(pane.env), argv: pane.argv });
      const opened = await host.open({ title: pane.title, cwd: pane.cwd, argv: command.argv, env: { ...clientEnv, ...command.env } });
      return { ...opened, ...(opened.pane ? { pane: containerPaneId(spec.engine, name, host.key, opened.pane) } : {}) };
    },
  };
}

/** What the opener answers before any pane is open: the host it wraps, under the container host's key. */
function containerHostLike(host: PaneHost): PaneHost {
  return { ...host, key: CONTAINER_HOST };
}
