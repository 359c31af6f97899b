/**
 * Runs command hooks from `--settings` as Claude Code does: each gets the event's JSON on stdin and
 * runs under `sh -c` in the session's folder. A subset: `UserPromptSubmit` (exit code 2 blocks the
 * prompt), `Stop`, `Notification` (`permission_prompt`, `idle_prompt`; its matcher is matched
 * against the notification type), and `PermissionRequest` (fired as the permission dialog opens).
 */
import { spawn } from 'node:child_process';

/**
 * Runs every hook configured for `event` whose matcher fits `matchOn`; resolves with the outcomes
 * `{ command, exitCode, stdout, stderr }` once all have finished.
 */
export async function runHooks(settings, event, payload, matchOn = '') {
  const groups = settings?.hooks?.[event] ?? [];
  const commands = groups
    .filter((group) => matches(group.matcher, matchOn))
    .flatMap((group) => group.hooks ?? [])
    .filter((hook) => hook.type === 'command' && hook.command);
  const input = JSON.stringify({ hook_event_name: event, ...payload });
  return Promise.all(commands.map((hook) => runOne(hook.command, input, payload.cwd, (hook.timeout ?? 60) * 1000)));
}

function matches(matcher, value) {
  if (!matcher || matcher === '*') return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(value);
  } catch {
    return matcher === value;
  }
}

function runOne(command, input, cwd, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, CLAUDE_PROJECT_DIR: cwd }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (data) => (stdout += data));
    child.stderr.on('data', (data) => (stderr += data));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ command, exitCode: null, stdout, stderr: String(error) });
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ command, exitCode, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
