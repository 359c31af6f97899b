/**
 * flume's public API: everything a repository's config, a third-party plugin, an agent driver or an
 * orchestrator imports. The built-in kinds, readers and drivers use exactly this entry.
 */
export { createHooks, callHook, tappedKeys } from './api/hooks.js';
export type { Hooks, ReadyContext, AgentPlan, StartRequest, ConfirmRequest, DeliverableRequest, DeliverableReading, TidyCandidate } from './api/hooks.js';
export { createFlume, defineConfig, definePlugin, Registry } from './api/plugin.js';
export { defineDeliverable } from './api/deliverable.js';
export { defineKind } from './api/kind.js';
export type { DeliverableContext, DeliverableReader } from './api/deliverable.js';
export type { Flume, FlumeDefaults, FlumePlugin } from './api/plugin.js';
export { canType, checkPaneSpec, definePaneHost, lookAtPane, lookAtPanes, ownsPane, ownsPaneIn } from './api/pane-host.js';
export { defineDriver } from './api/driver.js';
export { processExists, processRunning, signalQuietly, waitGone } from './support/process.js';
export { closeAgent, openAgent, readJsonl, resendInBox, submit, waitFor } from './drivers/driving.js';
export type { AgentDriver, UsageRead } from './api/driver.js';
export type { DoctorCheck, PaneHost, PaneLook, PaneSeen, PaneSpec, PaneState } from './api/pane-host.js';
export { FlumeError, ERROR_CODES, flumeError, isFlumeError } from './api/errors.js';
export { SECRET_NAME } from './support/secret.js';
export type { FlumeErrorBuild, FlumeErrorCode, FlumeErrorOptions, PluginErrorCode } from './api/errors.js';
export { ERROR_CATALOGUE } from './api/error-catalogue.js';
export type { CatalogueEntry, CatalogueWording } from './api/error-catalogue.js';
export { configSchema } from './api/config.js';
export type { FlumeConfig } from './api/plugin.js';
export type { KindDef, StageDef, ReadyStep, Limits } from './api/config.js';
export { run, which } from './support/exec.js';
export { agentBaseEnvironment, GIT_LOCAL_VARIABLES, matchesVariable, utf8LocaleFor, withoutGitLocal } from './support/environment.js';
export type { RunResult, RunOptions } from './support/exec.js';
export { ensureHostStateDir, hostStateDir } from './state/host.js';
export { followStreams, readEvents, watchState, type EventName, type FlumeEvent } from './state/events.js';
export { isRepositoryTrusted } from './config/trust.js';
export { withLock } from './state/lock.js';
export { programFileLock, recordTrustGrants, replaceFileKeepingMode, type TrustGrant } from './state/trust-grants.js';
export { toMs } from './support/duration.js';
export { schemaCheck, type SchemaCheck } from './support/json-schema.js';
export { contentWords } from './support/landing.js';
export type { AgentHandle, AgentReading, AgentUsage, AgentState, PromptState, TokenCounts } from './api/agent.js';
export type { DeliveryState, PlaceRecord, ReadyRecord, StageRecord, StageState } from './api/record.js';
export type { Logger } from './api/plugin.js';
export { waitForChange } from './engine/supervisor/files.js';
export type { StatusReport, PlaceStatus, RepositoryStatus } from './engine/status/status.js';
export type { StageView } from './engine/stage/stage-view.js';
export { waitingOn, waitingPlaces, waitingTracker, type Waiting } from './engine/stage/waiting.js';
export { paneEnvScript, shellQuote, SHELL_NAME, splitBursts, withoutPasteMarkers } from './drivers/pane-env.js';
export { privateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './state/private.js';
export { forgetKept, Kept, keptCache, keptCaches, type KeptOptions } from './support/kept.js';
