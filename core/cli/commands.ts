/** Every CLI command, in the order `flume --help` lists them. */
import type { Command } from './command.js';
import { launchCommand } from './launch.js';
import { statusCommand } from './status.js';
import { kindsCommand } from './kinds.js';
import { pluginsCommand } from './plugins.js';
import { goOnCommand, retryCommand, stageCommand, stopCommand, tellCommand } from './agent-commands.js';
import { dropCommand } from './drop.js';
import { tidyCommand } from './tidy.js';
import { watchCommand } from './watch.js';
import { trustCommand } from './trust.js';
import { doctorCommand } from './doctor.js';
import { versionCommand } from './version.js';

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
  dropCommand,
  tidyCommand,
  watchCommand,
  trustCommand,
  doctorCommand,
  versionCommand,
];
