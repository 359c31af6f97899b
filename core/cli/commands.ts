/** Every CLI command, in the order `flume --help` lists them. */
import type { Command } from './command.js';
import { launchCommand } from './commands/launch.js';
import { statusCommand } from './commands/status.js';
import { kindsCommand } from './commands/kinds.js';
import { pluginsCommand } from './commands/plugins.js';
import { goOnCommand, nextCommand, retryCommand, stageCommand, stopCommand, tellCommand } from './commands/agent-commands.js';
import { waitCommand } from './callers/wait.js';
import { eventsCommand } from './callers/events.js';
import { dropCommand } from './commands/drop.js';
import { tidyCommand } from './commands/tidy.js';
import { watchCommand } from './commands/watch.js';
import { trustCommand } from './commands/trust.js';
import { doctorCommand } from './commands/doctor.js';
import { versionCommand } from './commands/version.js';
import { hostsCommand } from './remote/hosts-command.js';

export const commands: Command[] = [
  launchCommand,
  statusCommand,
  kindsCommand,
  pluginsCommand,
  tellCommand,
  stopCommand,
  retryCommand,
  goOnCommand,
  stageCommand,
  nextCommand,
  waitCommand,
  eventsCommand,
  dropCommand,
  tidyCommand,
  watchCommand,
  trustCommand,
  doctorCommand,
  versionCommand,
  hostsCommand,
];
