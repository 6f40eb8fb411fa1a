import type { UserEvent } from '../../domain/user/userEvents';
import { defineProjection, insertOnce } from '../projection';
import { USERS, type UserDocument } from './userDocument';

export const usersProjection = defineProjection<UserEvent>('users', {
  async UserRegistered(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<UserDocument>(USERS),
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
        activated: false,
        pending: false,
        mfaConfigured: false,
        passwordConfigured: d.passwordHash !== null,
        suspended: false,
        tier: 'free',
        _position: '',
      },
      event,
    );
  },
});
