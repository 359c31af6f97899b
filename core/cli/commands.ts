/** Every CLI command, in the order `flume --help` lists them. */
import type { Command } from './command.js';
import { launchCommand } from './launch.js';
import { statusCommand } from './status.js';
import { kindsCommand } from './kinds.js';
import { dropCommand } from './drop.js';
import { tidyCommand } from './tidy.js';

export const commands: Command[] = [launchCommand, statusCommand, kindsCommand, dropCommand, tidyCommand];
