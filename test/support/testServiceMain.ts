// The service's command line as main.ts runs it, with the test job runners (test/support/testJobRunners.ts)
// beside the production ones: the entry point of a service child process whose test requests test jobs.
import { runCommandLine } from '../../main';
import { withTestJobRunners } from './testJobRunners';

runCommandLine({ jobRunners: withTestJobRunners });
