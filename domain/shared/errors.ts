// Errors a user can act on. Each has a stable code and the HTTP status that fits it; the API's
// envelope middleware turns them into `{ success: false, error }` with that status.

export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, code = 'INVALID_INPUT') {
    super(code, message, 400);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message: string, code = 'UNAUTHORIZED') {
    super(code, message, 401);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string, code = 'FORBIDDEN') {
    super(code, message, 403);
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string, code = 'NOT_FOUND') {
    super(code, message, 404);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, code = 'CONFLICT') {
    super(code, message, 409);
  }
}

/** Exhaustiveness check for switches over unions. */
export function assertNever(value: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
}

export class ServiceUnavailableError extends DomainError {
  constructor(message: string, code = 'NOT_CONFIGURED') {
    super(code, message, 503);
  }
}

export class TooLargeError extends DomainError {
  constructor(message: string, code = 'TOO_LARGE') {
    super(code, message, 413);
  }
}
