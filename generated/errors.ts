// Generated from openapi/ by scripts/gen-errors.js (npm run gen); do not edit.

/** Every error code the contract declares. */
export type ErrorCode =
  | 'AUTHENTICATION_FAILED'
  | 'BAD_EVENT_QUEUE_ID'
  | 'BAD_IMAGE'
  | 'BAD_NARROW'
  | 'BAD_REQUEST'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'CHANNEL_ALREADY_EXISTS'
  | 'EXPECTATION_MISMATCH'
  | 'INVALID_INVITATION'
  | 'METHOD_NOT_ALLOWED'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'NOT_IMPLEMENTED'
  | 'PASSWORD_AUTH_DISABLED'
  | 'PASSWORD_RESET_REQUIRED'
  | 'PUSH_SERVICE_NOT_CONFIGURED'
  | 'RATE_LIMIT_HIT'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'REALM_DEACTIVATED'
  | 'REALM_UPLOAD_QUOTA'
  | 'REQUEST_CONFUSING_VAR'
  | 'REQUEST_VARIABLE_MISSING'
  | 'SERVER_NOT_READY'
  | 'STREAM_DOES_NOT_EXIST'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'UNAUTHORIZED'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'USER_DEACTIVATED';

/** The HTTP statuses at which the contract declares each code. */
export const ERROR_STATUSES = {
  AUTHENTICATION_FAILED: [401],
  BAD_EVENT_QUEUE_ID: [400],
  BAD_IMAGE: [400],
  BAD_NARROW: [400],
  BAD_REQUEST: [400, 404, 413, 415, 416],
  CANNOT_DEACTIVATE_GROUP_IN_USE: [400],
  CANNOT_DEACTIVATE_LAST_USER: [400],
  CHANNEL_ALREADY_EXISTS: [409],
  EXPECTATION_MISMATCH: [400],
  INVALID_INVITATION: [400],
  METHOD_NOT_ALLOWED: [405],
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: [400],
  NOT_IMPLEMENTED: [501],
  PASSWORD_AUTH_DISABLED: [401],
  PASSWORD_RESET_REQUIRED: [401],
  PUSH_SERVICE_NOT_CONFIGURED: [400],
  RATE_LIMIT_HIT: [429],
  REACTION_ALREADY_EXISTS: [400],
  REACTION_DOES_NOT_EXIST: [400],
  REALM_DEACTIVATED: [401],
  REALM_UPLOAD_QUOTA: [400],
  REQUEST_CONFUSING_VAR: [400],
  REQUEST_VARIABLE_MISSING: [400],
  SERVER_NOT_READY: [503],
  STREAM_DOES_NOT_EXIST: [400],
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: [400],
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: [400],
  UNAUTHORIZED: [401],
  UNAUTHORIZED_PRINCIPAL: [400],
  USER_DEACTIVATED: [401],
} as const;

/** The statuses an error with code C may have. */
export type ErrorStatus<C extends ErrorCode> = (typeof ERROR_STATUSES)[C][number];

/** The fields an error body with each code carries beside result, msg and code: one shape per schema declaring it. */
export type ErrorFields = {
  AUTHENTICATION_FAILED: Record<string, never>;
  BAD_EVENT_QUEUE_ID: { "queue_id": string };
  BAD_IMAGE: Record<string, never>;
  BAD_NARROW: Record<string, never>;
  BAD_REQUEST: Record<string, never> | { "parameters": string };
  CANNOT_DEACTIVATE_GROUP_IN_USE: { "objections": Array<{ "type": "subgroup" | "realm" | "channel" | "user_group"; "supergroup_ids"?: Array<number>; "channel_id"?: number; "group_id"?: number; "settings"?: Array<string> }> };
  CANNOT_DEACTIVATE_LAST_USER: { "is_last_owner": boolean; "entity": string };
  CHANNEL_ALREADY_EXISTS: Record<string, never>;
  EXPECTATION_MISMATCH: Record<string, never>;
  INVALID_INVITATION: Record<string, never>;
  METHOD_NOT_ALLOWED: { "allowed_methods": Array<string> };
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: { "first_message_id_allowed_to_move": number | null; "total_messages_in_topic": number; "total_messages_allowed_to_move": number };
  NOT_IMPLEMENTED: Record<string, never>;
  PASSWORD_AUTH_DISABLED: Record<string, never>;
  PASSWORD_RESET_REQUIRED: Record<string, never>;
  PUSH_SERVICE_NOT_CONFIGURED: Record<string, never>;
  RATE_LIMIT_HIT: { "retry-after": number };
  REACTION_ALREADY_EXISTS: Record<string, never>;
  REACTION_DOES_NOT_EXIST: Record<string, never>;
  REALM_DEACTIVATED: Record<string, never>;
  REALM_UPLOAD_QUOTA: Record<string, never>;
  REQUEST_CONFUSING_VAR: { "var_name1": string; "var_name2": string };
  REQUEST_VARIABLE_MISSING: { "var_name": string };
  SERVER_NOT_READY: Record<string, never> | { "status": "failed"; "checks": { "database": { "status": "ok" | "failed" | "skipped"; "error"?: string }; "migrations": { "status": "ok" | "failed" | "skipped"; "pending": Array<string> }; "event_queues": { "queues": number; "events": number; "waiting_polls": number }; "push_relay": { "configured": boolean; "backlog": number }; "redis": { "status": "ok" | "failed" | "skipped"; "used_by": Array<"event_bus" | "rate_limits">; "error"?: string } } };
  STREAM_DOES_NOT_EXIST: { "stream"?: string; "stream_id"?: number };
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: Record<string, never>;
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: Record<string, never>;
  UNAUTHORIZED: Record<string, never>;
  UNAUTHORIZED_PRINCIPAL: Record<string, never>;
  USER_DEACTIVATED: Record<string, never>;
};

/** Each operation's declared error codes, by status. */
export const OPERATION_ERRORS = {
  'accept-invite-link': {
    400: ['BAD_REQUEST', 'INVALID_INVITATION', 'REQUEST_VARIABLE_MISSING'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'add-alert-words': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'add-apns-token': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'add-fcm-token': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'add-reaction': {
    400: ['BAD_REQUEST', 'REACTION_ALREADY_EXISTS', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'add-submessage': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'check-messages-match-narrow': {
    400: ['BAD_NARROW', 'BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-channel': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    409: ['CHANNEL_ALREADY_EXISTS'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-custom-profile-field': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-invite-link': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-realm-domain': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-saved-snippet': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-user': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'create-user-group': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'deactivate-custom-emoji': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'deactivate-own-user': {
    400: ['CANNOT_DEACTIVATE_LAST_USER'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'deactivate-user': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'deactivate-user-group': {
    400: ['BAD_REQUEST', 'CANNOT_DEACTIVATE_GROUP_IN_USE'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-avatar': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-custom-profile-field': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-message': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-queue': {
    400: ['BAD_EVENT_QUEUE_ID', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-realm-domain': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-realm-icon': {
    400: ['UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-realm-logo': {
    400: ['REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-saved-snippet': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    404: ['BAD_REQUEST'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'delete-topic': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'edit-saved-snippet': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    404: ['BAD_REQUEST'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'fetch-api-key': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['AUTHENTICATION_FAILED', 'PASSWORD_AUTH_DISABLED', 'PASSWORD_RESET_REQUIRED', 'REALM_DEACTIVATED', 'USER_DEACTIVATED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-alert-words': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-avatar': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-avatar-medium': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-custom-emoji': {
    401: ['UNAUTHORIZED'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-custom-profile-fields': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-events': {
    400: ['BAD_EVENT_QUEUE_ID', 'BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-file-temporary-url': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    404: ['BAD_REQUEST'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-health': {
    400: ['BAD_REQUEST'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-is-user-group-member': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-message': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-message-history': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-messages': {
    400: ['BAD_NARROW', 'BAD_REQUEST', 'REQUEST_CONFUSING_VAR', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-own-user': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-presence': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-read-receipts': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-realm-domains': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-saved-snippets': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-server-settings': {
    400: ['BAD_REQUEST'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-stream-by-id': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-stream-id': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-stream-topics': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-streams': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-subscriptions': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-by-email': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-group-members': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-group-subgroups': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-groups': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-presence': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-user-status': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'get-users': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'mute-topic': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'reactivate-user': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'register-client-device': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'register-push-device': {
    400: ['BAD_REQUEST', 'PUSH_SERVICE_NOT_CONFIGURED', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'register-queue': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-alert-words': {
    400: ['REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-apns-token': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-client-device': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-fcm-token': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-own-profile-data': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'remove-reaction': {
    400: ['BAD_REQUEST', 'REACTION_DOES_NOT_EXIST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'render-message': {
    400: ['REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'reorder-custom-profile-fields': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'report-message': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'send-message': {
    400: ['BAD_REQUEST', 'REQUEST_CONFUSING_VAR', 'REQUEST_VARIABLE_MISSING', 'STREAM_DOES_NOT_EXIST', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'set-typing-status': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'set-typing-status-for-message-edit': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'subscribe': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'unsubscribe': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-custom-profile-field': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-message': {
    400: ['BAD_REQUEST', 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', 'REQUEST_CONFUSING_VAR', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-message-flags': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-message-flags-for-narrow': {
    400: ['BAD_NARROW', 'BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-own-profile-data': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-presence': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-realm': {
    400: ['BAD_REQUEST', 'EXPECTATION_MISMATCH', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-realm-domain': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-realm-user-settings-defaults': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-settings': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-status': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-subscription-property': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-subscription-settings': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user-by-email': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user-group': {
    400: ['BAD_REQUEST', 'EXPECTATION_MISMATCH'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user-group-members': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user-group-subgroups': {
    400: ['BAD_REQUEST'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'update-user-topic': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'upload-avatar': {
    400: ['BAD_REQUEST', 'REALM_UPLOAD_QUOTA'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'upload-custom-emoji': {
    400: ['BAD_IMAGE', 'BAD_REQUEST', 'REALM_UPLOAD_QUOTA'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'upload-file': {
    400: ['BAD_REQUEST', 'REALM_UPLOAD_QUOTA'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'upload-realm-icon': {
    400: ['BAD_REQUEST', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
  'upload-realm-logo': {
    400: ['BAD_REQUEST', 'REQUEST_VARIABLE_MISSING', 'UNAUTHORIZED_PRINCIPAL'],
    401: ['UNAUTHORIZED'],
    413: ['BAD_REQUEST'],
    415: ['BAD_REQUEST'],
    429: ['RATE_LIMIT_HIT'],
    503: ['SERVER_NOT_READY'],
  },
} as const satisfies Record<string, Record<number, readonly ErrorCode[]>>;

/**
 * The codes answered outside any operation's declarations, by status: a path
 * the server does not serve, a method the path lacks, an operation not
 * implemented yet (openapi/components/common.yaml#/x-outside-operations).
 */
export const OUTSIDE_OPERATION_ERRORS = {
  404: ['BAD_REQUEST'],
  405: ['METHOD_NOT_ALLOWED'],
  416: ['BAD_REQUEST'],
  501: ['NOT_IMPLEMENTED'],
} as const satisfies Record<number, readonly ErrorCode[]>;
