import { EsdbEventStore } from '../../stores/eventstore/esdbEventStore';
import { eventStoreContract } from './eventStore.contract';

// Runs against a real server only (docker compose up -d, then EVENTSTORE_URL=esdb://localhost:2113?tls=false);
// EventStoreDB 22.6 or later. The adapter's logic also runs against an emulated server in
// esdbEventStore.unit.spec.ts on every run.
const url = process.env.EVENTSTORE_URL;

eventStoreContract(
  'EsdbEventStore',
  async () => EsdbEventStore.connect(url ?? ''),
  url ? undefined : 'EVENTSTORE_URL is not set',
  { reopen: async () => EsdbEventStore.connect(url ?? ''), longLogEvents: 20_000 },
);
