/**
 * Reading Claude Code agents: what one look at an agent gathers (its state file, pane, transcript's
 * tail and screen) and how the driver judges its state from that, for one agent or many at once.
 * Many at once share what they have in common: each config folder's state files are read once, and
 * each host's panes and screens are looked at in one go, so reading thirty agents costs about what
 * reading one does.
 */
import { stat } from 'node:fs/promises';
import { canType, keptCache, lookAtPanes, sameProcess, type AgentHandle, type AgentReading, type PaneHost, type PaneSeen } from '../../core/index.js';
import { readState, sessionStates, type SessionFile, type TranscriptReading } from './transcript.js';
import { classifyScreen, draftText, permissionTool } from './screen.js';
import { patternsFor, type ClaudeCodePatterns } from './patterns.js';

/** What the driver knows of where its agents are. */
export interface AgentPlaces {
  host(key: string): PaneHost | undefined;
  configOf(handle: AgentHandle): string;
  transcriptOf(handle: AgentHandle): Promise<string | undefined>;
}

/**
 * Reads many agents as the driver's `read` reads each (undefined for one that could not be read):
 * each config folder's state files read once, every transcript, then each host's panes looked at
 * in one go after the transcripts (`lookAtPanes`: the screen is the newer reading, as `read` takes
 * it and `judgeAgent` assumes).
 */
export async function readAgents(handles: AgentHandle[], where: AgentPlaces): Promise<Array<AgentReading | undefined>> {
  const sessions = new Map(await Promise.all([...new Set(handles.map(where.configOf))].map(async (dir) => [dir, await sessionStates(dir)] as const)));
  const transcripts = await Promise.all(
    handles.map(async (handle) => {
      try {
        return { read: await readTranscript(handle, await where.transcriptOf(handle)) };
      } catch {
        return undefined;
      }
    }),
  );
  const seen = new Map<AgentHandle, PaneSeen>();
  for (const key of new Set(handles.filter((h) => h.pane).map((h) => h.host))) {
    const host = where.host(key);
    if (!host) continue;
    for (const [handle, look] of await lookAtPanes(host, handles.filter((h) => h.pane && h.host === key))) seen.set(handle, look);
  }
  return handles.map((handle, i) => {
    const transcript = transcripts[i];
    if (!transcript) return undefined;
    const session = sessions.get(where.configOf(handle))?.get(handle.sessionId);
    const pane = seen.get(handle);
    const alive = pane ? pane.alive : Boolean(session && sameProcess(session.pid, session.procStart));
    return judgeAgent(handle, { session, own: pane?.own ?? false, alive, transcript: transcript.read, screen: pane?.screen, paneless: !canType(where.host(handle.host)) });
  });
}

/** What one reading of an agent gathered: its state file, its pane, its transcript's tail, its screen. */
interface AgentLook {
  session?: SessionFile;
  /** The handle's pane is its own (core/api/pane-host.ts ownsPane). */
  own: boolean;
  alive: boolean;
  transcript?: TranscriptReading;
  /** Read only while it is alive. */
  screen?: string;
  /** Its host cannot type (`canType: false`): its command went to the operator, who may not have run it yet. */
  paneless?: boolean;
}

/**
 * A transcript's reading. The reading is a function of the file's bytes and the version's patterns,
 * so a process that reads agents again and again (the supervisor answering status) keeps the last
 * reading of each file and reuses it while the file is the same file, at the same size and time; a
 * file that changed while it was read is not kept. A one-shot command pays one `stat` more a file.
 */
export async function readTranscript(handle: AgentHandle, path: string | undefined): Promise<TranscriptReading | undefined> {
  if (!path) return undefined;
  const patterns = patternsFor(handle.version);
  const before = await fileStamp(path);
  const kept = before && READINGS.get(path);
  if (kept && kept.stamp === before && kept.patterns === patterns) return structuredClone(kept.reading);
  const reading = await readState(path, { patterns });
  if (before && (await fileStamp(path)) === before) {
    READINGS.set(path, { stamp: before, patterns, reading: structuredClone(reading) });
  }
  return reading;
}

/** The last reading of each transcript this process read, by path. */
const READINGS = keptCache<string, { stamp: string; patterns: ClaudeCodePatterns; reading: TranscriptReading }>('claude-code transcript readings', { holds: 'the last reading of each Claude Code transcript, by path, with the stamp of the file it was read from', entries: 500 });

/** What identifies a file's content without reading it: device, inode, size and change time. */
async function fileStamp(path: string): Promise<string | undefined> {
  const s = await stat(path, { bigint: true }).catch(() => undefined);
  return s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
}

/** Judges an agent from a look: exited when its process is gone; asking when a dialog is open by any reading. */
export function judgeAgent(handle: AgentHandle, { session, own, alive, transcript, screen, paneless }: AgentLook): AgentReading {
  const patterns = patternsFor(handle.version);
  if (!alive) {
    if (!transcript && !handle.pane && paneless) return { state: 'not-up' };
    return { state: 'exited', ...(handle.pane && !own ? { paneGone: true } : {}), ...(transcript?.needs ? { needs: transcript.needs } : transcript?.lastText ? { needs: transcript.lastText } : {}), ...(transcript?.lastActivity ? { lastActivity: transcript.lastActivity } : {}) };
  }
  const view = screen === undefined ? 'unknown' : classifyScreen(screen, patterns);
  if (view === 'trust') {
    return { state: 'asking', dialog: 'trust', needs: `Claude Code asks whether to trust the folder ${handle.cwd}: answer it with \`flume trust --repo ${handle.cwd}\` (after reading the repository's flume config, if it has one), then \`flume retry\` the place` };
  }
  if (transcript?.state === 'asking' || view === 'question') {
    return { ...transcript, state: 'asking', dialog: 'question', needs: transcript?.needs ?? 'it asks a question (see its pane)' };
  }
  if (view === 'permission' || (session?.status === 'waiting' && transcript?.pendingTool)) {
    // The screen names the tool as soon as it draws the dialog; the transcript's line can come later.
    const tool = transcript?.pendingTool?.name ?? (view === 'permission' ? permissionTool(screen!, patterns) : undefined);
    return { ...transcript, state: 'asking', dialog: 'permission', needs: `permission to use ${tool ?? 'a tool'}` };
  }
  if (transcript?.openPrompt !== undefined && view === 'input-ready' && isDraft(screen!, transcript.openPrompt, patterns)) {
    // Esc before the first reply: the turn was cancelled and its prompt is back in the box, unsent.
    const { openPrompt: _open, ...rest } = transcript;
    return { ...rest, state: 'idle', turnEnded: true, needs: CANCELLED };
  }
  if (!transcript) return { state: view === 'input-ready' ? 'idle' : 'starting' };
  if (transcript.state === 'idle' && !transcript.turnEnded && view === 'working') return { ...transcript, state: 'working' };
  if (transcript.state === 'working' && view === 'input-ready' && session?.status === 'idle') {
    // Builds that write no turn end: the screen and Claude Code's state both say it stopped.
    return { ...transcript, state: 'idle', turnEnded: true, needs: transcript.needs ?? transcript.lastText };
  }
  return transcript;
}


/** What an agent whose last prompt was cancelled before any reply needs. */
const CANCELLED = 'its prompt was cancelled before any reply (Esc) and is back in its input box, unsent: press Enter in its pane to send it, or clear it';

/** True when the input box on screen holds `text` as a draft and the agent is not working. */
export function isDraft(screen: string, text: string, patterns: ClaudeCodePatterns): boolean {
  if (classifyScreen(screen, patterns) !== 'input-ready') return false;
  const draft = draftText(screen, patterns);
  return draft.trim() !== '' && sameText(draft, text, patterns);
}

/**
 * True when a draft on screen is the text flume typed (the screen wraps and trims lines). A long
 * text is compared without its whitespace (a row can break inside a word), by its start and its
 * end, so a box still empty, or showing only the first bursts of the text, is not it yet.
 */
export function sameText(draft: string, text: string, patterns: ClaudeCodePatterns): boolean {
  const squash = (value: string) => value.replace(/\s+/g, ' ').trim();
  if (patterns.screen.pastedDraft.test(draft.trim())) return true;
  if (squash(draft) === squash(text)) return true;
  const bare = (value: string) => value.replace(/\s+/g, '');
  const [shown, typed] = [bare(draft), bare(text)];
  return text.length > 200 && shown !== '' && typed.startsWith(shown.slice(0, 100)) && typed.endsWith(shown.slice(-100));
}
