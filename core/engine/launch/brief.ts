/**
 * What a launch is asked for, and its brief read and checked: every launch path (CLI, MCP server,
 * herdr) and its dry run read the brief here.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { flumeError } from '../../api/errors.js';
import { checkText } from '../../support/text.js';

/** What a launch names. */
export interface LaunchRequest {
  kind: string;
  /** The name; without one, a name is made from the brief (with a suffix when taken). */
  name?: string;
  brief?: string;
  briefFile?: string;
  from?: string;
  /** False for --no-start: the place waits for `flume stage` or `flume retry`, even with a supervisor. */
  start?: boolean;
  /** False for --no-watch: its caller steps it; commands on it start no supervisor. */
  watch?: boolean;
  /** --container IMAGE: the place's agents run in a container of this image (the config's `agent.container` otherwise). */
  container?: string;
}

/**
 * Briefs already read, by request: a launch with no name plans up to fifty names (eachName), each
 * planning the place, and its brief file is read and checked once for all of them.
 */
const read = new WeakMap<object, Promise<string>>();

/** Reads and checks a launch's brief: text or a file, never empty; once per request. */
export function readBrief(request: Pick<LaunchRequest, 'brief' | 'briefFile'>): Promise<string> {
  let brief = read.get(request);
  if (!brief) read.set(request, (brief = readBriefOnce(request)));
  return brief;
}

async function readBriefOnce(request: Pick<LaunchRequest, 'brief' | 'briefFile'>): Promise<string> {
  if (request.brief !== undefined && request.briefFile !== undefined) {
    throw flumeError('BAD_USAGE', {}, { variant: 'briefTwice' });
  }
  let brief = request.brief;
  if (request.briefFile !== undefined) {
    brief = await readFile(resolve(request.briefFile), 'utf8').catch(() => {
      throw flumeError('BRIEF_MISSING', { file: request.briefFile }, {
        variant: 'unreadable',
        details: { briefFile: request.briefFile },
      });
    });
  }
  if (!brief || !brief.trim()) {
    throw flumeError('BRIEF_MISSING', {});
  }
  // Every launch path (CLI, MCP server, herdr) reads its brief here, so this one check covers them all.
  return checkText(brief, request.briefFile !== undefined ? `The brief file ${request.briefFile}` : 'The brief');
}
