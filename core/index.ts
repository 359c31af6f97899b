/**
 * flume's public API: everything a repository's config, a third-party plugin, an agent driver or an
 * orchestrator imports. The built-in kinds, readers and drivers use exactly this entry.
 */
export { createHooks, callHook, tappedKeys } from './hooks.js';
export type { Hooks, ReadyContext, AgentPlan, StartRequest, ConfirmRequest, DeliverableRequest, DeliverableReading, TidyCandidate } from './hooks.js';
export { createFlume, defineConfig, defineDeliverable, defineKind, definePlugin, Registry } from './plugin.js';
export type { DeliverableContext, DeliverableReader, Flume, FlumeDefaults, FlumePlugin } from './plugin.js';
export { canType, checkPaneSpec, defineDriver, definePaneHost, lookAtPane, lookAtPanes, ownsPane, ownsPaneIn } from './agent.js';
export { processExists, processRunning, signalQuietly, waitGone } from './process.js';
export { closeAgent, openAgent, readJsonl, resendInBox, submit, waitFor } from './driving.js';
export type { AgentDriver, DoctorCheck, PaneHost, PaneLook, PaneSeen, PaneSpec, PaneState, UsageRead } from './agent.js';
export { FlumeError, ERROR_CODES, flumeError, isFlumeError } from './errors.js';
export { SECRET_NAME } from './secret.js';
export type { FlumeErrorBuild, FlumeErrorCode, FlumeErrorOptions, PluginErrorCode } from './errors.js';
export { ERROR_CATALOGUE } from './error-catalogue.js';
export type { CatalogueEntry, CatalogueWording } from './error-catalogue.js';
export { configSchema } from './config/schema.js';
export type { FlumeConfig, KindDef, StageDef, ReadyStep, Limits } from './config/schema.js';
export { run, which } from './exec.js';
export { agentBaseEnvironment, GIT_LOCAL_VARIABLES, matchesVariable, utf8LocaleFor, withoutGitLocal } from './environment.js';
export type { RunResult, RunOptions } from './exec.js';
export { ensureHostStateDir, hostStateDir } from './state/host.js';
export { isRepositoryTrusted } from './config/trust.js';
export { withLock } from './state/lock.js';
export { programFileLock, recordTrustGrants, replaceFileKeepingMode, type TrustGrant } from './state/trust-grants.js';
export { toMs } from './duration.js';
export { schemaCheck, type SchemaCheck } from './json-schema.js';
export { contentWords } from './landing.js';
export type {
  AgentHandle,
  AgentReading,
  AgentUsage,
  AgentState,
  DeliveryState,
  Logger,
  PlaceRecord,
  PromptState,
  ReadyRecord,
  StageRecord,
  StageState,
  TokenCounts,
} from './types.js';
export { waitForChange } from './engine/files.js';
export type { StatusReport, PlaceStatus, RepositoryStatus } from './engine/status.js';
export type { StageView } from './engine/stage-view.js';
export { waitingOn, waitingPlaces, waitingTracker, type Waiting } from './engine/waiting.js';
export { paneEnvScript, shellQuote, SHELL_NAME, splitBursts, withoutPasteMarkers } from './pane-env.js';
export { privateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './state/private.js';
