import { EsdbEventStore } from '../../stores/eventstore/esdbEventStore';
import { eventStoreContract } from './eventStore.contract';

// Runs against a real server only (docker compose up -d, then EVENTSTORE_URL=esdb://localhost:2113?tls=false).
const url = process.env.EVENTSTORE_URL;

eventStoreContract(
  'EsdbEventStore',
  async () => EsdbEventStore.connect(url ?? ''),
  url ? undefined : 'EVENTSTORE_URL is not set',
);
