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
import { endInside, execCommand, makeContainer, throwawayCommand, type ContainerPlace, type ContainerSpec, type EngineName } from './engine.js';
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
      if (absent(id)) return false;
      const { host, pane } = inner(id);
      return host.alive(pane);
    },
    async look(id): Promise<PaneLook | undefined> {
      if (absent(id)) return undefined;
      const { host, pane } = inner(id);
      if (host.look) return host.look(pane);
      const identity = await host.identity(pane);
      const alive = await host.alive(pane);
      const screen = alive ? await host.capture(pane) : undefined;
      return { ...(identity !== undefined ? { identity } : {}), alive, ...(screen !== undefined ? { screen } : {}) };
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
        for (const id of group) {
          const pane = readContainerPane(id)!.pane;
          const look = looks ? looks.get(pane) : await this.look!(id);
          if (look) found.set(id, look);
        }
      }
      return found;
    },
  };
}

/**
 * The host a stage of a place in a container starts on: `open` makes (or finds) the place's
 * container and opens a pane of `host` whose program is the agent's, exec'd in the container with
 * the agent's environment; the pane's own program (the engine's client) gets `clientEnv`.
 */
export function containerOpener(host: PaneHost, spec: ContainerSpec, place: ContainerPlace, clientEnv: Record<string, string>, options: { plan?: boolean } = {}): PaneHost {
  if (options.plan) {
    // A dry run makes nothing: what the driver asks of the image runs in a container removed after.
    return {
      ...containerHostLike(host),
      async run(argv, env) {
        const command = throwawayCommand(spec, { commonDir: place.commonDir }, { env: insideEnvironment(spec, env), argv });
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
  return {
    ...containerHostLike(host),
    async run(argv, env) {
      const name = await makeContainerOnce(spec, place);
      const command = execCommand(spec, name, { cwd: place.path, env: insideEnvironment(spec, env), argv });
      const [file, ...args] = command.argv.filter((arg) => arg !== '-it');
      return run(file!, args, { env: { ...clientEnv, ...command.env }, clean: true, timeoutMs: 60_000 });
    },
    async open(pane: PaneSpec) {
      const name = await makeContainerOnce(spec, place);
      const command = execCommand(spec, name, { cwd: pane.cwd, env: insideEnvironment(spec, pane.env), argv: pane.argv });
      const opened = await host.open({ title: pane.title, cwd: pane.cwd, argv: command.argv, env: { ...clientEnv, ...command.env } });
      return { ...opened, ...(opened.pane ? { pane: containerPaneId(spec.engine, name, host.key, opened.pane) } : {}) };
    },
  };
}

/** What the opener answers before any pane is open: the host it wraps, under the container host's key. */
function containerHostLike(host: PaneHost): PaneHost {
  return { ...host, key: CONTAINER_HOST };
}
