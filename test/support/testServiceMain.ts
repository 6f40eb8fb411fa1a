// The service's command line as main.ts runs it, with the test job runners (test/support/testJobRunners.ts)
// beside the production ones: the entry point of a service child process whose test requests test jobs.
import { runCommandLine } from '../../main';
import { withTestJobRunners } from './testJobRunners';

// The jobs role runs on this thread unless the test names a layout: the thread of THREAD_ROLES runs
// main.ts, which has the production runners only.
process.env.THREAD_ROLES ??= 'none';
runCommandLine({ jobRunners: withTestJobRunners });
