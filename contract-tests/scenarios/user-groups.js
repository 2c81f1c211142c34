'use strict';
/*
 * Scenarios for user groups. Anything that changes a group acts on a group
 * made for it by the scenario, never on the system groups or the demo data.
 */
const { api, fresh, refusal, unauthenticated } = require('./core');

async function groupId(s, name) {
  const res = await api(s, 'GET', '/user_groups', {}, s.users.member);
  const group = res.body.user_groups.find((g) => g.name === name);
  if (!group) throw new Error(`no group ${name}`);
  return group.id;
}

/** A new group made by the owner, who manages every group; its id. */
async function freshGroupId(s, fields = {}) {
  const res = await api(
    s,
    'POST',
    '/user_groups/create',
    { name: fresh('group'), description: 'contract', members: [], ...fields },
    s.users.owner,
  );
  if (res.status !== 200) throw new Error(`create-user-group failed: ${JSON.stringify(res.body)}`);
  return res.body.group_id;
}

/** A group held as a subgroup: the objection names the holder, known only once the scenario made it. */
const groupInUse = refusal(
  'CANNOT_DEACTIVATE_GROUP_IN_USE',
  'Cannot deactivate user group in use.',
  async (req, s) => {
    req.user = s.users.owner;
    const used = await freshGroupId(s);
    const holder = await freshGroupId(s, { subgroups: [used] });
    req.pathParams.user_group_id = used;
    groupInUse.expected.objections = [{ type: 'subgroup', supergroup_ids: [holder] }];
  },
  { objections: [] },
);

const scenarios = {
  'get-user-groups': {
    200: (req, s) => {
      req.user = s.users.guest;
      req.query = { include_deactivated_groups: true };
    },
    400: refusal('BAD_REQUEST', 'include_deactivated_groups is not a boolean', (req, s) => {
      req.user = s.users.member;
      req.query = { include_deactivated_groups: 'yes' };
    }),
    401: unauthenticated((req) => {
      req.query = {};
    }),
  },
  'get-is-user-group-member': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = await groupId(s, 'role:members');
      req.pathParams.user_id = s.users.owner.id;
      req.query = { direct_member_only: false };
    },
    400: refusal('BAD_REQUEST', 'Invalid user group', (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = 999999;
      req.pathParams.user_id = s.users.owner.id;
      req.query = {};
    }),
    401: unauthenticated((req, s) => {
      req.pathParams.user_group_id = 1;
      req.pathParams.user_id = s.users.owner.id;
      req.query = {};
    }),
  },
  'create-user-group': {
    200: (req, s) => {
      req.user = s.users.member;
      req.body = { name: fresh('group'), description: 'made by the contract tests', members: [s.users.member.id] };
    },
    400: refusal('BAD_REQUEST', "User group name cannot start with 'role:'.", (req, s) => {
      req.user = s.users.member;
      req.body = { name: 'role:contract', description: '', members: [] };
    }),
    401: unauthenticated(),
  },
  'update-user-group': {
    200: async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
      req.body = { description: 'changed by the contract tests' };
    },
    400: refusal('EXPECTATION_MISMATCH', "'old' value does not match the expected value.", async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
      const nobody = await groupId(s, 'role:nobody');
      req.body = { can_join_group: { new: nobody, old: await groupId(s, 'role:members') } };
    }),
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
    }),
  },
  'deactivate-user-group': {
    200: async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
    },
    400: groupInUse,
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
    }),
  },
  'get-user-group-members': {
    200: async (req, s) => {
      req.user = s.users.guest;
      req.pathParams.user_group_id = await groupId(s, 'role:members');
      req.query = { direct_member_only: false };
    },
    400: refusal('BAD_REQUEST', 'Invalid user group', (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = 999999;
      req.query = {};
    }),
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
      req.query = {};
    }),
  },
  'update-user-group-members': {
    200: async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
      req.body = { add: [s.users.member.id] };
    },
    400: refusal('BAD_REQUEST', 'Insufficient permission', async (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = await freshGroupId(s);
      req.body = { add: [s.users.admin.id] };
    }),
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
    }),
  },
  'get-user-group-subgroups': {
    200: async (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = await groupId(s, 'role:everyone');
      req.query = { direct_subgroup_only: true };
    },
    400: refusal('BAD_REQUEST', 'direct_subgroup_only is not a boolean', (req, s) => {
      req.user = s.users.member;
      req.pathParams.user_group_id = 1;
      req.query = { direct_subgroup_only: 'maybe' };
    }),
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
      req.query = {};
    }),
  },
  'update-user-group-subgroups': {
    200: async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
      req.body = { add: [await freshGroupId(s)] };
    },
    400: refusal('BAD_REQUEST', 'Nothing to do. Specify at least one of "add" or "delete".', async (req, s) => {
      req.user = s.users.owner;
      req.pathParams.user_group_id = await freshGroupId(s);
      req.body = { add: [] };
    }),
    401: unauthenticated((req) => {
      req.pathParams.user_group_id = 1;
    }),
  },
};

module.exports = { scenarios };
