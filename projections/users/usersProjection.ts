import type { UserEvent } from '../../domain/user/userEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { TRIALS, USERS, type TrialDocument, type UserDocument } from './userDocument';

const users = (store: ReadStore) => store.collection<UserDocument>(USERS);

export const usersProjection = defineProjection<UserEvent>('users', [USERS, TRIALS], {
  async UserRegistered(event, store) {
    const d = event.data;
    await insertOnce(
      users(store),
      {
        _id: d.userId,
        id: d.userId,
        username: d.username,
        usernameLower: d.username.toLowerCase(),
        name: d.name,
        email: d.email,
        emailLower: d.email?.toLowerCase() ?? null,
        jobTitle: d.jobTitle,
        companyName: d.companyName,
        created: d.registered,
        firstUser: d.firstUser,
        activated: false,
        pending: d.pending,
        thirdPartyCodeHash: d.thirdPartyCodeHash,
        mfaConfigured: false,
        passwordConfigured: d.passwordHash !== null,
        sessionVersion: 0,
        suspended: false,
        tier: 'free',
        photo: null,
        experiments: [],
        projectsSortOrder: 'created-desc',
        timezone: null,
        dismissedNotifications: [],
        lastAcceptedTermsOfService: null,
        eulas: {},
        subscription: { status: 'none', periodStart: null, periodEnd: null, cancellationRequestDate: null, terminationDate: null },
        developerProfileOrganizationId: null,
        lastSeen: null,
        _position: '',
      },
      event,
    );
  },
  async UserActivated(event, store) {
    const d = event.data;
    const chosen = d.username === undefined ? {} : { username: d.username, usernameLower: d.username.toLowerCase() };
    await updateOnce(users(store), d.userId, { $set: { activated: true, pending: false, thirdPartyCodeHash: null, ...chosen, ...(d.name === undefined ? {} : { name: d.name }) } }, event);
  },
  async PasswordChanged(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { passwordConfigured: true, sessionVersion: event.data.sessionVersion } }, event);
  },
  async TotpEnabled(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { mfaConfigured: true } }, event);
  },
  async TotpCleared(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { mfaConfigured: false } }, event);
  },
  async LoginSucceeded(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { lastSeen: event.data.at } }, event);
  },
  async UserProfileUpdated(event, store) {
    const { userId, updated: _updated, ...changes } = event.data;
    await updateOnce(users(store), userId, { $set: { ...changes } }, event);
  },
  async TermsOfServiceAccepted(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { lastAcceptedTermsOfService: { version: event.data.version, acceptanceDate: event.data.accepted } } }, event);
  },
  async EulaAccepted(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { [`eulas.${event.data.name}`]: event.data.version } }, event);
  },
  async NotificationDismissed(event, store) {
    await updateOnce(users(store), event.data.userId, { $push: { dismissedNotifications: event.data.notification } }, event);
  },
  async UserPhotoChanged(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { photo: event.data.photo } }, event);
  },
  async DeveloperProfileCreated(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { developerProfileOrganizationId: event.data.organizationId } }, event);
  },
  async EnterpriseTrialStarted(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<TrialDocument>(TRIALS),
      {
        _id: d.trialId,
        id: d.trialId,
        userId: d.userId,
        organizationId: d.organizationId,
        created: d.created,
        expirationDate: d.expirationDate,
        notes: d.notes,
        expiredDate: null,
        deletedDate: null,
        upgradedDate: null,
        _position: '',
      },
      event,
    );
  },
  async SubscriptionCheckoutStarted(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { 'subscription.status': 'checkout' } }, event);
  },
  async SubscriptionActivated(event, store) {
    const d = event.data;
    await updateOnce(
      users(store),
      d.userId,
      { $set: { tier: d.tier, subscription: { status: 'active', periodStart: d.periodStart, periodEnd: d.periodEnd, cancellationRequestDate: null, terminationDate: null } } },
      event,
    );
  },
  async SubscriptionCancellationRequested(event, store) {
    const d = event.data;
    await updateOnce(
      users(store),
      d.userId,
      { $set: { 'subscription.status': 'cancellation-pending', 'subscription.cancellationRequestDate': d.requested, 'subscription.terminationDate': d.effective } },
      event,
    );
  },
  async SubscriptionCancellationUndone(event, store) {
    await updateOnce(
      users(store),
      event.data.userId,
      { $set: { 'subscription.status': 'active', 'subscription.cancellationRequestDate': null, 'subscription.terminationDate': null } },
      event,
    );
  },
  async SubscriptionCanceled(event, store) {
    await updateOnce(users(store), event.data.userId, { $set: { tier: 'free', 'subscription.status': 'canceled', 'subscription.terminationDate': event.data.canceled } }, event);
  },
  async UserDeleted(event, store) {
    // Everything the read side holds about the user goes: a deleted user leaves no personal data.
    await users(store).deleteOne({ _id: event.data.userId });
    await store.collection<TrialDocument>(TRIALS).deleteMany({ userId: event.data.userId });
  },
});
