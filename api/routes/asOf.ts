// `asOf` on project information and the raw-data listing: the same route code, run
// against queries over the read models as they were then (projections/history/pointInTime.ts).
import { z } from 'zod';
import { NotFoundError } from '../../domain/shared/errors';
import { DeviceQueries } from '../../projections/devices/deviceQueries';
import { DspFeaturesQueries } from '../../projections/dspFeatures/dspFeaturesQueries';
import { DeploymentQueries } from '../../projections/deployments/deploymentQueries';
import { KerasModelQueries } from '../../projections/kerasModels/kerasModelQueries';
import { AnomalyModelQueries } from '../../projections/anomalyModels/anomalyModelQueries';
import { ModelTestingQueries } from '../../projections/modelTesting/modelTestingQueries';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { JobQueries } from '../../projections/jobs/jobQueries';
import type { Project } from '../../projections/projects/projectQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { UserQueries } from '../../projections/users/userQueries';
import type { ApiDeps } from '../apiDeps';

/** An ISO time with an offset, normalised to UTC, no later than now. */
export const asOfParameter = z.iso
  .datetime({ offset: true })
  .transform((t) => new Date(t).toISOString())
  .refine((t) => t <= new Date().toISOString(), 'asOf is in the future');

/** `Operation.keepAnswer` of an operation taking asOf: a past view comes from the log, not the read models, and is not kept. */
export const keepUnlessAsOf = (query: { asOf?: string }): boolean => query.asOf === undefined;

/** The deps and project as they were at `asOf`; 404 when the project did not exist then. */
export async function asOf(deps: ApiDeps, projectId: number, time: string): Promise<{ deps: ApiDeps; project: Project; now: Date }> {
  const store = await deps.pointInTime(projectId, time);
  const projects = store ? new ProjectQueries(store) : undefined;
  const project = await projects?.byId(projectId);
  if (!store || !projects || !project) throw new NotFoundError(`Project ${projectId} did not exist at ${time}`, 'PROJECT_NOT_FOUND');
  return {
    deps: {
      ...deps,
      projects,
      users: new UserQueries(store),
      impulses: new ImpulseQueries(store),
      devices: new DeviceQueries(store),
      samples: new SampleQueries(store),
      jobs: new JobQueries(store),
      dspFeatures: new DspFeaturesQueries(store),
      kerasModels: new KerasModelQueries(store),
      deployments: new DeploymentQueries(store),
      anomalyModels: new AnomalyModelQueries(store),
      modelTesting: new ModelTestingQueries(store),
    },
    project,
    now: new Date(time),
  };
}
