// The required fields of the SDK's ProjectInfoResponse and Project, checked by the HTTP and SDK tests.

/** Every required top-level field of ProjectInfoResponse (spec and SDK). */
export const REQUIRED_PROJECT_INFO_FIELDS = [
  'success', 'project', 'developmentKeys', 'impulse', 'devices', 'dataSummary', 'dataSummaryPerCategory', 'computeTime',
  'acquisitionSettings', 'collaborators', 'deploySettings', 'experiments', 'latencyDevices', 'urls', 'showCreateFirstImpulse',
  'showGettingStartedWizard', 'performance', 'trainJobNotificationUids', 'dspJobNotificationUids',
  'modelTestingJobNotificationUids', 'exportJobNotificationUids', 'hasNewTrainingData', 'studioUrl', 'inPretrainedModelFlow',
  'showSensorDataInAcquisitionGraph', 'notifications',
];

/** Required fields of the SDK's Project. */
export const REQUIRED_PROJECT_FIELDS = [
  'id', 'name', 'description', 'created', 'owner', 'ownerIsDeveloperProfile', 'collaborators', 'labelingMethod', 'metadata',
  'isEnterpriseProject', 'whitelabelId', 'tier', 'hasPublicVersion', 'isPublic', 'allowsLivePublicAccess',
  'indPauseProcessingSamples', 'publicProjectListed',
];
