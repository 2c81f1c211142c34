/**
 * /api/docs/init.js: Swagger UI's settings, served as a file (the page's
 * Content-Security-Policy allows no inline script). Every operation is
 * listed with its operationId (the name Zulip's documentation and client
 * libraries use), with a filter box, no online validator badge (it would
 * call out to the validator's site), and the HTTP Basic credentials kept
 * for the page's lifetime only.
 *
 * "Try it" requests go without the browser's own credentials (the page
 * sends the API key in its Authorization header): API 401s carry
 * `WWW-Authenticate: Basic`, as Zulip's do, and a browser answers that with
 * its own login prompt whenever the request may carry credentials, holding
 * the request until someone answers it; this way the 401 reaches the page.
 *
 * The "try it" form of a request body starts as the contract's example of
 * that body (dredd's requests start from it too). Left alone, Swagger UI
 * (5.x) fills every form field with a sample of its schema ("string", 0,
 * true, an enum's first value) and sends every optional field left empty as
 * an empty value: a Zulip server reads both as sent, so `subject` would go
 * beside `topic` (REQUEST_CONFUSING_VAR), `queue_id=string` beside a
 * message, and so on. Here a field the example does not name starts empty,
 * and an empty optional field is left out unless "Send empty value" is
 * ticked. (Query and path parameters start from their `example` or
 * `default`: the contract gives none to a deprecated alias or to the
 * second of two parameters that exclude each other.)
 *
 * The filter box matches what Swagger UI's own filter matches (a tag's
 * name, showing the whole tag, or an operation's path) and an operation's
 * operationId too: Zulip's documentation and client libraries name
 * operations by it ("get-messages"), and a path such as /messages is part
 * of a dozen others.
 *
 * A JSON-encoded form field (the contract's `encoding` says
 * application/json, as Zulip reads lists and objects) reaches Swagger UI's
 * HTTP client as JSON text: the client runs JSON.parse over every field's
 * value, which turns a one-element list such as `[1]` into the number 1
 * ("messages is not a list").
 */
export const INIT_SCRIPT = `'use strict';
// Swagger UI's own HTTP client (swagger-client), which formFromExample's fn wraps.
var client = SwaggerUIBundle.plugins.SwaggerClient({ configs: {}, getConfigs: function () { return {}; } }).fn;

window.ui = SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  plugins: [formFromExample],
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  filter: true,
  validatorUrl: null,
  persistAuthorization: false,
  queryConfigEnabled: false,
  requestInterceptor: function (request) {
    request.credentials = 'omit';
    return request;
  },
});

function formFromExample(system) {
  var h = system.React.createElement;
  var UNFILLED = 'x-parley-unfilled';
  var isForm = function (type) {
    return type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data';
  };
  var wrap = function (change) {
    return function (Original) {
      return function (props) {
        return h(Original, change(props) || props);
      };
    };
  };
  return {
    fn: {
      opsFilter: function (taggedOps, phrase) {
        if (!phrase) return taggedOps;
        var wanted = phrase.toLowerCase();
        var has = function (text) {
          return String(text || '').toLowerCase().indexOf(wanted) !== -1;
        };
        return taggedOps
          .map(function (tagObj, tag) {
            if (has(tag)) return tagObj;
            var ops = tagObj && tagObj.get && tagObj.get('operations');
            if (!ops || !ops.filter) return null;
            var shown = ops.filter(function (op) {
              // Once an operation has been opened, Swagger UI's resolved copy names it with "-" turned
              // to "_" and keeps the contract's name beside it.
              var id = op.getIn(['operation', '__originalOperationId']) || op.getIn(['operation', 'operationId']);
              return has(op.get('path')) || has(id);
            });
            return shown.size > 0 ? tagObj.set('operations', shown) : null;
          })
          .filter(function (tagObj) {
            return tagObj !== null;
          });
      },
      buildRequest: function (req) {
        return client.buildRequest(jsonFieldsAsText(req));
      },
      execute: function (req) {
        return client.execute(jsonFieldsAsText(req));
      },
    },
    wrapComponents: {
      // The body's properties, as the form renders them: those the example names carry its value.
      RequestBody: wrap(function (props) {
        var content = props.requestBody && props.requestBody.get('content');
        var type = props.contentType || (content && content.keySeq().first());
        var media = content && content.get(type);
        var example = media && media.get('example');
        var properties = media && media.getIn(['schema', 'properties']);
        if (!isForm(type) || !example || !example.has || !properties) return null;
        var filled = properties.map(function (schema, name) {
          return example.has(name) ? schema.set('example', example.get(name)) : schema.set(UNFILLED, true);
        });
        return Object.assign({}, props, { requestBody: props.requestBody.setIn(['content', type, 'schema', 'properties'], filled) });
      }),
      // A field's first value: "" rather than a sample for a property the example does not name.
      JsonSchemaForm: wrap(function (props) {
        if (!props.dispatchInitialValue || !props.schema || !props.schema.get(UNFILLED)) return null;
        return Object.assign({}, props, { dispatchInitialValue: false });
      }),
      // "Send empty value" starts unticked.
      ParameterIncludeEmpty: wrap(function (props) {
        var options = props.isIncludedOptions;
        if (!options || !options.shouldDispatchInit) return null;
        return Object.assign({}, props, { isIncludedOptions: Object.assign({}, options, { defaultValue: false }) });
      }),
    },
  };

  function jsonFieldsAsText(req) {
    var body = req.requestBody;
    var item = req.spec && req.spec.paths && req.spec.paths[req.pathName];
    var content = item && item[req.method] && item[req.method].requestBody && item[req.method].requestBody.content;
    if (!body || typeof body !== 'object' || !content) return req;
    var media = content[req.requestContentType || Object.keys(content)[0]];
    var encoding = (media && media.encoding) || {};
    var fields = {};
    Object.keys(body).forEach(function (name) {
      var value = body[name];
      var json = encoding[name] && encoding[name].contentType === 'application/json';
      fields[name] = json && typeof value !== 'string' ? JSON.stringify(value) : value;
    });
    return Object.assign({}, req, { requestBody: fields });
  }
}
`;
