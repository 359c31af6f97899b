/**
 * The published shapes of the `--json` answers of the commands that act (launch, tell, stop, retry,
 * go-on, stage, drop, tidy) and of kinds, doctor, trust, version, hosts and every error: one `<name>.schema.json` each,
 * written from here by `npm run schema`. flume's MCP server answers each tool with the same JSON and
 * names the same schema as the tool's `outputSchema`, so a CLI caller and a model read one shape.
 */
import { placeSchema, stageSchema, statusSchema } from '../status/status-schema.js';
import { OUTCOMES } from '../status/wait.js';
import { EVENT_NAMES } from '../../state/events.js';

const DRAFT = 'http://json-schema.org/draft-07/schema#';
const placeId = { type: 'string', description: 'The place: <kind>/<name>.' } as const;

/** A top-level schema with its $id and title. */
function published<T extends object>(name: string, title: string, body: T) {
  return { $schema: DRAFT, $id: `https://flume.dev/${name}.schema.json`, title, type: 'object', ...body, additionalProperties: false } as const;
}

/** `flume launch --json`: the place made, as `flume status` shows it. */
export const launchSchema = published('launch', 'flume launch --json', {
  required: ['place'],
  properties: { place: placeSchema },
});

/** `flume tell --json`. */
export const tellSchema = published('tell', 'flume tell --json', {
  required: ['place', 'taken', 'sends'],
  properties: {
    place: placeId,
    taken: { type: 'boolean', description: 'True once the text was confirmed in the agent\'s transcript; false only with `held` (a tell neither taken nor held is an error).' },
    held: { const: true, description: 'The agent shows the text queued (the Gemini CLI, while its turn or its start runs): it submits it by itself when that ends, and flume types nothing more. Absent when taken.' },
    sends: { type: 'integer', minimum: 1, description: 'How many times it was typed (twice when the first was not taken).' },
  },
});

/** `flume stop --json`. */
export const stopSchema = published('stop', 'flume stop --json', {
  required: ['place', 'state', 'already'],
  properties: {
    place: placeId,
    state: { const: 'exited' },
    already: { type: 'boolean', description: 'The agent was not running before.' },
  },
});

/** `flume retry`, `flume go-on` and `flume stage` with --json: the stage started, as status shows it. */
export const stageResultSchema = published('stage', 'flume retry | go-on | stage --json', {
  required: ['place', 'stage'],
  properties: { place: placeId, stage: stageSchema },
});

/** `flume drop --json`. */
export const dropSchema = published('drop', 'flume drop --json', {
  required: ['place', 'dropped'],
  properties: {
    place: placeId,
    dropped: { type: 'object', required: ['at'], properties: { at: { type: 'string' }, reason: { type: 'string' } }, additionalProperties: false },
  },
});

/** `flume tidy --json`. */
export const tidySchema = published('tidy', 'flume tidy --json', {
  required: ['outcomes'],
  properties: {
    outcomes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'path', 'branch', 'action'],
        properties: {
          id: placeId,
          path: { type: 'string' },
          branch: { type: 'string' },
          action: { enum: ['removed', 'kept', 'skipped', 'would-remove'], description: 'removed: worktree gone; kept: a safety rule kept it; skipped: its work is not over; would-remove: a dry run.' },
          reason: { type: 'string' },
          branchOutcome: {
            type: 'object',
            required: ['deleted'],
            properties: {
              deleted: { type: 'boolean' },
              missing: { type: 'integer', minimum: 0, description: 'Patches of the kept branch its target lacks.' },
              by: { enum: ['patch', 'content'], description: 'The evidence that kept the branch: a patch its target lacks, or content (merging it into its target would add or change something, though every patch is there).' },
            },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
  },
});

/** `flume kinds --json`. */
export const kindsSchema = published('kinds', 'flume kinds --json', {
  required: ['kinds'],
  properties: {
    kinds: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'description', 'declaredBy', 'branch', 'stages'],
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          declaredBy: { type: 'string', description: 'The plugin that declared it.' },
          replaces: { type: 'string', description: 'The plugin whose kind of this name it stands in for.' },
          branch: { type: 'string', description: 'The branch pattern: <kind>/{name} unless declared.' },
          advance: { enum: ['flume', 'caller'], description: 'Who starts its stages: flume, or its caller (`flume stage`, `flume next`).' },
          stages: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name', 'deliverable', 'agent'],
              properties: {
                name: { type: 'string' },
                deliverable: { type: 'string' },
                agent: { type: 'string' },
                gate: { const: true, description: 'The stage is a gate (`advance: \'caller\'`): after it delivers, the place waits for `flume next`.' },
              },
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
    },
  },
});

/** `flume doctor --json`. */
export const doctorSchema = published('doctor', 'flume doctor --json', {
  required: ['version', 'ok', 'checks'],
  properties: {
    version: { const: 1 },
    ok: { type: 'boolean', description: 'False when a check a launch needs failed (the command exits 1).' },
    repo: { type: 'string' },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'ok', 'detail', 'needed', 'by'],
        properties: {
          name: { type: 'string' },
          ok: { type: 'boolean' },
          detail: { type: 'string' },
          fix: { type: 'string' },
          needed: { type: 'boolean' },
          version: { type: 'string' },
          by: { type: 'string', description: 'The plugin whose check it is.' },
        },
        additionalProperties: false,
      },
    },
  },
});

/** Any command's refusal with --json (exit code 1 or 2); an MCP tool error carries the same in its text. */
export const errorSchema = published('error', 'flume <command> --json, when it refuses', {
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', pattern: '^[A-Z][A-Z_]*$' },
        message: { type: 'string' },
        fix: { type: 'string' },
        plugin: { type: 'string' },
        hook: { type: 'string' },
        details: { type: 'object' },
      },
      additionalProperties: false,
    },
  },
});

/** `flume trust --json`: what was trusted (the config file and its digest), or, with --revoke, whether trust was taken back. */
export const trustSchema = published('trust', 'flume trust --json', {
  required: ['root'],
  properties: {
    root: { type: 'string', description: 'The repository root.' },
    file: { type: ['string', 'null'], description: 'The config file trusted; null for a repository without one.' },
    digest: { type: ['string', 'null'], description: 'The sha256 of what was trusted.' },
    state: { type: 'string', description: 'The trust state now (`trusted`).' },
    revoked: { type: 'boolean', description: 'With --revoke: true when trust was taken back, false when there was none.' },
  },
});

/** `flume version --json` (flume's and each program's version) and `flume --version --json` (flume's and node's). */
export const versionSchema = published('version', 'flume version --json, flume --version --json', {
  required: ['flume'],
  properties: {
    flume: { type: 'string', description: "flume's version." },
    node: { type: 'string', description: "node's version (`--version --json`)." },
    programs: {
      type: 'array',
      description: 'Each program flume found here, as doctor finds it (`version --json`).',
      items: {
        type: 'object',
        required: ['name', 'by', 'version'],
        properties: { name: { type: 'string' }, by: { type: 'string', description: 'What checked it (core, a driver, a host).' }, version: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
});

/** `flume wait --json` (and `--wait --json` on the commands that act): the place as status shows it, and the outcome reached. */
export const waitSchema = {
  ...statusSchema,
  $id: 'https://flume.dev/wait.schema.json',
  title: 'flume wait --json',
  description: 'The place as `flume status PLACE --json` shows it once the wait ended (no place when it is gone), and the outcome reached.',
  required: [...statusSchema.required, 'reached'],
  properties: {
    ...statusSchema.properties,
    reached: { enum: Object.keys(OUTCOMES), description: 'The outcome the wait ended on.' },
  },
} as const;

/** `flume events --json`: one such object per line. */
export const eventsSchema = {
  $schema: DRAFT,
  $id: 'https://flume.dev/events.schema.json',
  title: 'flume events --json (one line)',
  type: 'object',
  description: 'One event of a repository\'s stream: its id (growing by one with each event of the repository), when, the place and the event, then its own fields.',
  required: ['id', 'at', 'place', 'event'],
  properties: {
    id: { type: 'integer', minimum: 1, description: 'Resume after it with `flume events --since ID`.' },
    at: { type: 'string', description: 'When it happened (ISO 8601).' },
    place: placeId,
    event: { enum: Object.keys(EVENT_NAMES), description: Object.entries(EVENT_NAMES).map(([name, meaning]) => `${name}: ${meaning}`).join(' ') },
    stage: { type: 'string', description: 'The stage it concerns.' },
    what: { type: 'string', description: 'delivered, awaits-caller: what the stage delivered.' },
    needs: { type: 'string', description: 'waiting: what the stage needs.' },
    reason: { type: 'string', description: 'stopped, dropped, tidied, kept: why.' },
  },
  // An event carries its own fields beside these (sends, tokens, branch…): the stream is open to them.
  additionalProperties: true,
} as const;

/** `flume hosts [add … | remove …] --json`: the hosts named here after the command, and for `add` the added host's flume version. */
export const hostsSchema = published('hosts', 'flume hosts --json', {
  required: ['hosts'],
  properties: {
    hosts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'target', 'flume', 'addedAt'],
        properties: {
          name: { type: 'string', description: 'The name --host NAME and NAME:kind/name take.' },
          target: { type: 'string', description: 'Where ssh reaches it: user@host or a ~/.ssh/config alias.' },
          flume: { type: 'string', description: 'The command that runs flume there, as its login shell reads it.' },
          addedAt: { type: 'string' },
          lastReadingAt: { type: 'string', description: 'When it last answered a reading of several hosts.' },
        },
        additionalProperties: false,
      },
    },
    flume: { type: 'string', description: 'add: the version of the added host\'s flume, as its handshake answered.' },
  },
});

/** Each published result schema by its file name. */
export const resultSchemas = {
  'launch.schema.json': launchSchema,
  'tell.schema.json': tellSchema,
  'stop.schema.json': stopSchema,
  'stage.schema.json': stageResultSchema,
  'drop.schema.json': dropSchema,
  'tidy.schema.json': tidySchema,
  'kinds.schema.json': kindsSchema,
  'doctor.schema.json': doctorSchema,
  'error.schema.json': errorSchema,
  'trust.schema.json': trustSchema,
  'version.schema.json': versionSchema,
  'wait.schema.json': waitSchema,
  'events.schema.json': eventsSchema,
  'hosts.schema.json': hostsSchema,
} as const;
