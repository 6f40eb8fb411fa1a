// Sampling on demand, on the side of the `remote` process that holds the device's socket: the
// `startSampling` route (any API process) appends `DeviceSamplingRequested` naming the socket; this
// relay follows the log, sends the request to the sockets it holds, and turns the device's
// `sample*` answers into `DeviceSamplingProgressed` events, which any process passes on to the
// project's socket.io followers (api/socket/samplingProgressFeed.ts).
import type { Logger } from 'pino';
import { reportSamplingProgress } from '../commands/devices/deviceCommands';
import { systemContext } from '../commands/commandContext';
import { readingStep } from '../domain/device/deviceDecider';
import type { DeviceSamplingRequested, SamplingStage } from '../domain/device/deviceEvents';
import type { DeviceMessage } from '../domain/device/remoteMessages';
import { sampleRequestFrame } from '../domain/device/remoteReplies';
import type { ProjectDocument } from '../projections/projects/projectDocument';
import type { EventStore, Position, StoredEvent, Subscription } from '../stores/eventstore/eventStore';
import { accessEndingOf, DEVICE_ACCESS_ENDING_EVENTS } from './accessEndings';
import type { ConnectionRegistry } from './connectionRegistry';
import { samplingHmacKey } from './helloAuthentication';
import type { HeldDevice, RemoteMessageHandler, RemoteSocket } from './remoteSocket';

export const SAMPLING_RELAY = 'remote-sampling';

export interface SamplingRelayDeps {
  events: EventStore;
  /** The projects read model: the HMAC key is read when the request is sent, never stored. */
  projects: { byId(projectId: number): Promise<Pick<ProjectDocument, 'hmacKeys'> | null> };
  registry: Pick<ConnectionRegistry<RemoteSocket>, 'connection'> & Partial<Pick<ConnectionRegistry<RemoteSocket>, 'all'>>;
  /**
   * Ends a held socket whose access an event of the log ended (a revoked key, a deleted project or
   * device). Called in log order, so a request appended after the ending never reaches the socket.
   */
  endConnection?(held: HeldDevice, why: string): void;
  log: Logger;
  /** Wait before subscribing again after the subscription failed. */
  retryDelayMs?: number;
  now?: () => Date;
}

export type SamplingRelay = RemoteMessageHandler & {
  /** Ends the subscription and waits for the progress reports under way. */
  stop(): Promise<void>;
};

/** What this process knows of the request it sent on one socket: enough to drop repeats before touching the log. */
interface Sent {
  requestId: number;
  stages: Set<SamplingStage>;
  readingStep: number;
}

/** Request ids already sent, so a repeated delivery (the subscription is at least once) is not sent twice. */
const REMEMBERED_REQUESTS = 10_000;

const STAGES: Partial<Record<DeviceMessage['kind'], SamplingStage>> = {
  sampleAccepted: 'accepted',
  sampleFailed: 'failed',
  sampleStarted: 'started',
  sampleReading: 'reading',
  sampleUploading: 'uploading',
  sampleProcessing: 'processing',
  sampleFinished: 'finished',
};

/** The events the relay acts on; every other event (each sample's among them) is read past unparsed. */
const RELAYED_TYPES: ReadonlySet<string> = new Set(['DeviceSamplingRequested', ...DEVICE_ACCESS_ENDING_EVENTS]);

const NO_HMAC_KEY = 'The project has no HMAC key to sign the sample with; add one (POST /api/{projectId}/hmackeys) and ask again';
const KEY_UNREADABLE = 'The service could not read the project to send the request; ask again';
const SOCKET_GONE = 'The device disconnected before the request reached it';
const CONNECTION_ENDED = 'The device disconnected while sampling';

/**
 * Starts following the log from its end (requests appended before are not sent: the caller was
 * answered with an id, and the request ends when its socket does). Resolves once the starting point
 * is fixed, so a request appended after that is seen.
 */
export async function startSamplingRelay(deps: SamplingRelayDeps): Promise<SamplingRelay> {
  const { events, log } = deps;
  const now = deps.now ?? (() => new Date());
  const retryDelayMs = deps.retryDelayMs ?? 1_000;
  const sent = new Map<string, Sent>();
  const remembered = new Set<number>();
  // One chain of reports per socket: the device's stages reach the log in the order it said them.
  const chains = new Map<string, Promise<void>>();
  let stopped = false;
  let subscription: Subscription | undefined;
  let wakeRetry: (() => void) | undefined;
  let position: Position | undefined = await events.headPosition();

  const report = (held: HeldDevice, stage: SamplingStage, extra: { progressPercentage?: number; error?: string } = {}) => {
    const input = { projectId: held.projectId, deviceId: held.deviceId, connectionId: held.connectionId, stage, ...extra };
    const previous = chains.get(held.connectionId) ?? Promise.resolve();
    const next = previous
      .then(() => reportSamplingProgress({ events }, input, systemContext(SAMPLING_RELAY, now())))
      .then(
        () => undefined,
        (error: unknown) => log.warn({ err: error, deviceId: held.deviceId, connectionId: held.connectionId, stage }, 'could not record the progress of a sampling request'),
      )
      .finally(() => {
        if (chains.get(held.connectionId) === next) chains.delete(held.connectionId);
      });
    chains.set(held.connectionId, next);
  };

  const remember = (requestId: number) => {
    remembered.add(requestId);
    if (remembered.size > REMEMBERED_REQUESTS) remembered.delete(remembered.values().next().value!);
  };

  const send = async (request: DeviceSamplingRequested['data']) => {
    const held = deps.registry.connection(request.connectionId);
    // Another process holds the socket, or it is gone (its end ended the request).
    if (!held || remembered.has(request.requestId)) return;
    remember(request.requestId);
    sent.set(held.connectionId, { requestId: request.requestId, stages: new Set(), readingStep: -1 });
    let hmacKey: string | undefined;
    try {
      const project = await deps.projects.byId(request.projectId);
      hmacKey = project ? samplingHmacKey(project) : undefined;
    } catch (error) {
      // The request must end, or the device would stay busy until the silence runs out.
      log.error({ err: error, projectId: request.projectId }, 'could not read the HMAC key for a sampling request');
      sent.delete(held.connectionId);
      report(held, 'failed', { error: KEY_UNREADABLE });
      return;
    }
    if (hmacKey === undefined) {
      sent.delete(held.connectionId);
      report(held, 'failed', { error: NO_HMAC_KEY });
      return;
    }
    if (!held.socket.send(sampleRequestFrame(request, hmacKey))) {
      sent.delete(held.connectionId);
      report(held, 'failed', { error: SOCKET_GONE });
      return;
    }
    log.info({ projectId: request.projectId, deviceId: request.deviceId, requestId: request.requestId }, 'sent a sampling request to a device');
  };

  const handle = async (event: StoredEvent) => {
    if (DEVICE_ACCESS_ENDING_EVENTS.has(event.type) && deps.endConnection && deps.registry.all) {
      for (const held of [...deps.registry.all()]) {
        const why = accessEndingOf(event, held);
        if (why !== undefined) deps.endConnection(held, why);
      }
      return;
    }
    if (event.type !== 'DeviceSamplingRequested') return;
    try {
      await send(event.data as DeviceSamplingRequested['data']);
    } catch (error) {
      log.error({ err: error, streamId: event.streamId }, 'could not send a sampling request');
    }
  };

  const consume = async () => {
    while (!stopped) {
      const current = (subscription = events.subscribeToAll({ ...(position === undefined ? {} : { after: position }), types: RELAYED_TYPES }));
      try {
        for await (const event of current) {
          if (stopped) break;
          position = event.position;
          await handle(event);
        }
      } catch (error) {
        if (stopped) break;
        log.warn({ err: error }, 'the sampling relay lost its subscription to the log; subscribing again');
        await current.close().catch(() => undefined);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryDelayMs);
          wakeRetry = () => (clearTimeout(timer), resolve());
        });
        wakeRetry = undefined;
      }
    }
  };
  const consuming = consume();

  return {
    onDeviceMessage(held, message) {
      const stage = STAGES[message.kind];
      const current = sent.get(held.connectionId);
      // Not a sampling message, or nothing asked of this socket: nothing for the log.
      if (!stage || !current) return;
      let extra: { progressPercentage?: number; error?: string } = {};
      if (message.kind === 'sampleReading') {
        const step = readingStep(message.progressPercentage);
        if (step <= current.readingStep) return;
        current.readingStep = step;
        extra = { progressPercentage: message.progressPercentage };
      } else if (message.kind === 'sampleFailed') {
        extra = { error: message.error };
      }
      if (stage === 'finished' || stage === 'failed') sent.delete(held.connectionId);
      else if (stage !== 'reading') {
        if (current.stages.has(stage)) return;
        current.stages.add(stage);
      }
      report(held, stage, extra);
    },

    onConnectionEnded(held) {
      const current = sent.get(held.connectionId);
      if (!current) return;
      sent.delete(held.connectionId);
      // The disconnect usually ended the request already (then this appends nothing); should it
      // not have been recorded, the request still ends here.
      report(held, 'failed', { error: CONNECTION_ENDED });
    },

    async stop() {
      stopped = true;
      wakeRetry?.();
      await subscription?.close();
      await consuming;
      await Promise.all([...chains.values()]);
    },
  };
}
