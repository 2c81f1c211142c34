import { doUpdateRealmUserDefaults } from '../actions/realm-defaults';
import { doDeleteRealmIcon, doUploadRealmIcon } from '../actions/realm-icon';
import { doDeleteRealmLogo, doUploadRealmLogo } from '../actions/realm-logo';
import { doAddRealmDomain, doChangeRealmDomain, doRemoveRealmDomain, listRealmDomainsFor } from '../actions/realm-domains';
import { doUpdateRealm } from '../actions/realm-settings';
import { getRealmIconRedirect, getRealmLogoRedirect } from '../access/realm-images';
import type { Request } from 'express';
import { caller, HandlerTable, RESPONDED } from '../http/handler';

/** The query string as the client sent it (req.url: the pipeline rewrites originalUrl for the validator). */
function rawQuery(req: Request): string {
  const url = req.url;
  return url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
}

export const realmHandlers: HandlerTable = {
  // The request schema has no defaults, so the parameters are exactly the settings sent.
  'update-realm-user-settings-defaults': async (call) => {
    await doUpdateRealmUserDefaults(call.ctx, caller(call).user, call.params);
    return {};
  },
  'update-realm': async (call) => doUpdateRealm(call.ctx, caller(call).user, call.params),
  'get-realm-domains': async (call) => listRealmDomainsFor(call.ctx, caller(call).user),
  'create-realm-domain': async (call) => doAddRealmDomain(call.ctx, caller(call).user, call.params.domain, call.params.allow_subdomains),
  'update-realm-domain': async (call) => {
    await doChangeRealmDomain(call.ctx, caller(call).user, call.params.domain, call.params.allow_subdomains);
    return {};
  },
  'delete-realm-domain': async (call) => {
    await doRemoveRealmDomain(call.ctx, caller(call).user, call.params.domain);
    return {};
  },
  'get-realm-icon': async (call) => {
    call.res.redirect(302, getRealmIconRedirect(caller(call), rawQuery(call.req)));
    return RESPONDED;
  },
  'get-realm-logo': async (call) => {
    call.res.redirect(302, getRealmLogoRedirect(caller(call), call.params.night, rawQuery(call.req)));
    return RESPONDED;
  },
  'upload-realm-icon': async (call) => doUploadRealmIcon(call.ctx, caller(call).user, call.files),
  'delete-realm-icon': async (call) => doDeleteRealmIcon(call.ctx, caller(call).user),
  'upload-realm-logo': async (call) => {
    await doUploadRealmLogo(call.ctx, caller(call).user, call.params.night, call.files);
    return {};
  },
  'delete-realm-logo': async (call) => {
    await doDeleteRealmLogo(call.ctx, caller(call).user, call.params.night);
    return {};
  },
};
